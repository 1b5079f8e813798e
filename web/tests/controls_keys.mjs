// The live page's hardware controls (web/src/app.js, const HW) against the config key table
// (`npusim keys --json`, sim/config/config_keys.cpp): every control's key is a config key, a
// list control's key takes names, and a number control's min and max (in the control's unit)
// lie within the key's valid range, so the page never offers a value the loader refuses.
// usage: node web/tests/controls_keys.mjs --npusim BUILD/npusim
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const i = process.argv.indexOf("--npusim");
if (i < 0 || i + 1 >= process.argv.length) throw new Error("expected --npusim PATH");
const keys = new Map(JSON.parse(execFileSync(process.argv[i + 1], ["keys", "--json"], { encoding: "utf8" }))
  .map(k => [k.name, k]));

// The control list is an array literal of plain objects and arrow functions: evaluate it alone.
const app = readFileSync(join(here, "..", "src", "app.js"), "utf8");
const start = app.indexOf("const HW = [");
const end = app.indexOf("\n];", start);
if (start < 0 || end < 0) throw new Error("web/src/app.js: expected the control list 'const HW = [ ... ];'");
const controls = Function(`return ${app.slice(start + "const HW = ".length, end + 2)}`)();

// A control's unit, as it is appended to the value for --set, in the key's base unit.
const scale = { undefined: 1, " MHz": 1e6, " KiB": 1024 };
const problems = [];
for (const c of controls) {
  const k = keys.get(c.key);
  if (!k) { problems.push(`control ${c.id}: key ${c.key} is not a config key`); continue; }
  if (c.list) {
    if (k.kind !== "enum" && c.key !== "npu.dram.preset")
      problems.push(`control ${c.id}: a list, but ${c.key} is a ${k.kind}`);
    continue;
  }
  if (!(c.unit in scale)) { problems.push(`control ${c.id}: unknown unit '${c.unit}'`); continue; }
  if (k.min === undefined) { problems.push(`control ${c.id}: ${c.key} has no range in the table`); continue; }
  const lo = c.min * scale[c.unit], hi = c.max * scale[c.unit];
  if (!(lo >= k.min && hi <= k.max && lo <= hi))
    problems.push(`control ${c.id}: [${lo}, ${hi}] is not within ${c.key}'s [${k.min}, ${k.max}]`);
}
if (controls.length < 10) problems.push(`expected the page's hardware controls, found ${controls.length}`);
for (const p of problems) console.error(p);
console.log(`${controls.length} controls checked against ${keys.size} config keys`);
process.exit(problems.length ? 1 : 0);
