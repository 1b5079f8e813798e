// Loads an npusim trace.json with a DevTools-model trace parser from npm
// (@tracerbench/trace-model, web/package-lock.json) and checks what it built: the NPU process
// with its unit threads, the command slices, the counters and the flow arrows (every event has a
// "cat": such parsers throw on an event without one).
// usage: node web/tests/trace_model.mjs --npusim BUILD/npusim --out DIR
// Exit 77 (CTest: skipped) when the package is not installed (cd web && npm ci).
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "package.json"));
let buildModel;
try {
  ({ buildModel } = require("@tracerbench/trace-model"));
} catch {
  console.log("@tracerbench/trace-model is not installed (cd web && npm ci): skipped");
  process.exit(77);
}

const arg = (name) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`expected ${name} VALUE`);
  return process.argv[i + 1];
};
const npusim = arg("--npusim");
const out = arg("--out");
rmSync(out, { recursive: true, force: true });
execFileSync(npusim, ["run", "--config", "edge-s", "--workload", "small_cnn", "--fusion", "greedy", "--out", out],
             { stdio: ["ignore", "ignore", "inherit"] });
const trace = JSON.parse(readFileSync(join(out, "trace.json"), "utf8"));

const fail = (message) => {
  console.error(`trace_model: ${message}`);
  process.exit(1);
};
const model = buildModel(trace.traceEvents);  // throws on an event without "cat"
const npu = model.processes.find((p) => p.name === "NPU");
if (!npu) fail(`no process named NPU; found ${model.processes.map((p) => p.name).join(", ")}`);
const threads = npu.threads.map((t) => t.name);
for (const unit of ["MAC array", "vector unit"])
  if (!threads.some((n) => n && n.startsWith(unit))) fail(`no '${unit}' thread in ${threads.join(", ")}`);
const count = (ph) => trace.traceEvents.filter((e) => e.ph === ph).length;
const modelled = (phase) => model.events.filter((e) => e.ph === phase).length;
// Every slice, counter and flow end of the file is an event of the model.
for (const ph of ["X", "C", "s", "f"])
  if (modelled(ph) !== count(ph)) fail(`${count(ph)} '${ph}' events in the file, ${modelled(ph)} in the model`);
if (count("s") === 0) fail("no flow arrows in a greedy run of small_cnn");
const flow = model.events.find((e) => e.ph === "s");
if (!flow.args || flow.args.load === undefined || flow.args.consumer === undefined)
  fail(`a flow without args {load, consumer}: ${JSON.stringify(flow)}`);
console.log(`trace_model: ${model.events.length} events, ${npu.threads.length} NPU threads, ${count("s")} flows: ok`);
