// Browser tests of the live page and report.html in headless Chromium (Debian's chromium, driven
// by playwright-core). Each test writes a screenshot into the output folder.
//   node tests/browser.mjs --npusim PATH --out DIR [--only NAME] [--measure]
// Exit 0 pass, 1 fail, 77 skipped (no chromium, no playwright-core, or the page is not built).
import {execFileSync, spawn} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => { const i = process.argv.indexOf("--" + name); return i > 0 ? process.argv[i + 1] : fallback; };
const npusim = arg("npusim", join(here, "..", "..", "build", "npusim"));
const outDir = arg("out", join(tmpdir(), "npusim-browser"));
const only = arg("only", "");
const measure = process.argv.includes("--measure");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

function skip(why) { console.log("SKIP: " + why); process.exit(77); }
if (!existsSync(chromiumPath)) skip(chromiumPath + " not found (apt-get install chromium)");
if (!existsSync(join(here, "..", "dist", "index.html"))) skip("web/dist is not built (npm --prefix web ci && npm --prefix web run build)");
let chromium;
try { ({chromium} = await import("playwright-core")); } catch { skip("playwright-core is not installed (npm --prefix web ci)"); }
mkdirSync(outDir, {recursive: true});

function assert(cond, msg) { if (!cond) throw new Error("assertion failed: " + msg); }

/** `npusim serve --port 0`; resolves with {url, proc} once it printed its URL. */
function startServer() {
  return new Promise((resolve, reject) => {
    const proc = spawn(npusim, ["serve", "--port", "0"], {stdio: ["ignore", "pipe", "inherit"]});
    let text = "";
    proc.stdout.on("data", d => {
      text += d;
      const m = text.match(/open (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) resolve({url: m[1], proc});
    });
    proc.on("exit", code => reject(new Error("npusim serve exited with " + code + ": " + text)));
  });
}

/** summary.json of `npusim run` with the same parameters, in a scratch folder. */
function npusimRun(args) {
  const dir = mkdtempSync(join(tmpdir(), "npusim-browser-run-"));
  execFileSync(npusim, ["run", ...args, "--out", join(dir, "out")], {stdio: "ignore"});
  return {dir, summary: JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8"))};
}

async function waitRun(page, previous) {
  await page.waitForFunction(prev => document.body.dataset.runId && document.body.dataset.runId !== prev, previous, {timeout: 120000});
  await page.waitForTimeout(900);  // the points' transition (750 ms)
  return page.evaluate(() => document.body.dataset.runId);
}
const networkPoint = page => page.$eval("path.pt.role-cur.scope-network.level-dram", e => ({
  intensity: Number(e.dataset.intensity), ops: Number(e.dataset.opsPerSecond), transform: e.getAttribute("transform")}));
const value = (page, id) => page.$eval("#" + id, e => Number(e.dataset.value));

async function setControl(page, id, v) {
  await page.$eval("#" + id, (e, val) => { e.value = val; e.dispatchEvent(new Event("change", {bubbles: true})); }, String(v));
}

const tests = {
  // Change the array size: the network point moves and the cycle count is npusim run's.
  async array_size(page, url) {
    await page.goto(url + "?config=edge-m&workload=mobilenet_v2&fusion=greedy");
    const first = await waitRun(page, "");
    const before = await networkPoint(page), cyclesBefore = await value(page, "cycles");
    await setControl(page, "rows", 16);
    await waitRun(page, first);
    const after = await networkPoint(page), cycles = await value(page, "cycles");
    const direct = npusimRun(["--config", "edge-m", "--workload", "mobilenet_v2", "--fusion", "greedy", "--set", "npu.mac_array.rows=16"]);
    await page.screenshot({path: join(outDir, "array_size.png"), fullPage: false});
    assert(after.transform !== before.transform, "the network point moved (" + before.transform + " -> " + after.transform + ")");
    assert(after.ops < before.ops, "half the rows: lower achieved ops/s (" + before.ops + " -> " + after.ops + ")");
    assert(cycles === direct.summary.cycles, "cycles on the page " + cycles + " = npusim run's " + direct.summary.cycles);
    assert(cycles !== cyclesBefore, "the cycle count changed");
    assert(new URL(page.url()).searchParams.get("rows") === "16", "the URL carries the parameter");
    rmSync(direct.dir, {recursive: true, force: true});
  },
  // Fusion none -> greedy: arrows appear from each unfused op, DRAM bytes drop.
  async fusion(page, url) {
    await page.goto(url + "?config=edge-m&workload=mobilenet_v2&fusion=none");
    const first = await waitRun(page, "");
    const arrowsBefore = await page.$$eval("line.arrow", l => l.length), bytesBefore = await value(page, "dram-bytes");
    await setControl(page, "fusion", "greedy");
    await waitRun(page, first);
    const arrows = await page.$$eval("line.arrow", l => l.length), bytes = await value(page, "dram-bytes");
    await page.screenshot({path: join(outDir, "fusion.png"), fullPage: false});
    assert(arrowsBefore === 0, "no arrows unfused (" + arrowsBefore + ")");
    assert(arrows > 10, "arrows from the unfused ops (" + arrows + ")");
    assert(bytes < bytesBefore, "DRAM bytes drop (" + bytesBefore + " -> " + bytes + ")");
    const trips = await value(page, "round-trips");
    assert(trips >= 0 && (await page.textContent("#dram-bytes-view")).includes("Fusion removed"), "the round-trips view says what fusion removed");
  },
  // Pin a run, change the clock: the baseline stays drawn with an arrow to the new network
  // point and the headline compares with it; the URL reopens the same view.
  async pin_and_url(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    let id = await waitRun(page, "");
    const pinnedCycles = await value(page, "cycles");
    await page.click("#pin");  // redraws the same run (cached) with its baseline
    await page.waitForFunction(() => document.getElementById("pin").textContent.startsWith("Unpin"));
    await setControl(page, "clock", 400);  // half of edge-s's 800 MHz
    id = await waitRun(page, id);
    const baseline = await page.$$eval("path.pt.role-base", p => p.length), arrow = await page.$$eval("line.arrow-baseline", l => l.length);
    const deltas = await page.$$eval(".card .delta", d => d.map(e => e.textContent));
    await page.screenshot({path: join(outDir, "pin.png"), fullPage: false});
    assert(baseline === 1 && arrow === 1, "the baseline's network point and its arrow (" + baseline + ", " + arrow + ")");
    assert(deltas.length >= 5 && deltas.some(t => t.includes("× baseline")), "headline ratios to the baseline: " + deltas.join(" | "));
    const cycles = await value(page, "cycles");
    assert(cycles < pinnedCycles, "a slower clock: fewer core cycles for the same DRAM time (" + pinnedCycles + " -> " + cycles + ")");
    // Reopen the URL in a new tab: the same parameters, the same result.
    const shared = page.url();
    assert(new URL(shared).searchParams.get("clock") === "400", "the URL carries the clock: " + shared);
    const again = await page.context().browser().newPage();
    await again.goto(shared);
    await waitRun(again, "");
    assert(await again.$eval("#clock", e => e.value) === "400", "the control comes back from the URL");
    assert(await value(again, "cycles") === cycles, "the same cycles from the shared URL");
    await again.close();
  },
  // Drag across the unit timeline: the server re-bins that window; double-click: the whole run.
  async timeline_zoom(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=none");
    await waitRun(page, "");
    await page.waitForSelector("svg.timeline rect.bin");
    const span = () => page.$eval("svg.timeline", e => [Number(e.dataset.beginPs), Number(e.dataset.endPs)]);
    const [b0, e0] = await span();
    await page.locator("svg.timeline").scrollIntoViewIfNeeded();
    const box = await page.locator("svg.timeline").boundingBox();
    // From 40 % to 60 % of the plotted width (the rows start 110 of 900 viewBox units in).
    const xAt = f => box.x + box.width * (110 + f * (900 - 110 - 12)) / 900;
    await page.mouse.move(xAt(0.4), box.y + 12);
    await page.mouse.down();
    await page.mouse.move(xAt(0.6), box.y + 20, {steps: 5});
    await page.mouse.up();
    await page.waitForFunction(end => Number(document.querySelector("svg.timeline").dataset.endPs) !== end, e0);
    const [b1, e1] = await span();
    await page.locator("#timeline").screenshot({path: join(outDir, "timeline_zoom.png")});
    assert(b0 === 0 && Math.abs(b1 - 0.4 * e0) < 0.02 * e0 && Math.abs(e1 - 0.6 * e0) < 0.02 * e0,
      "the window is the dragged 40..60 % of the run: " + [b1, e1] + " of " + e0);
    await page.dblclick("svg.timeline", {position: {x: box.width / 2, y: 12}});
    await page.waitForFunction(() => Number(document.querySelector("svg.timeline").dataset.beginPs) === 0);
    assert((await span())[1] === e0, "double-click shows the whole run again");
  },
  // A broken ONNX upload: the loader's message next to the control.
  async broken_upload(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    await waitRun(page, "");
    await page.setInputFiles("#upload", {name: "broken.onnx", mimeType: "application/octet-stream", buffer: Buffer.from("this is not an ONNX model")});
    await page.waitForFunction(() => { const t = document.getElementById("upload-error").textContent; return t && !t.startsWith("checking"); }, null, {timeout: 60000});
    const msg = await page.textContent("#upload-error");
    await page.locator("aside").screenshot({path: join(outDir, "broken_upload.png")});
    assert(msg.includes("broken.onnx"), "the message names the file: " + msg);
    assert(/onnx|protobuf|parse/i.test(msg), "the ONNX loader's message: " + msg);
  },
  // report.html from npusim run: the same app, offline, the run's numbers.
  async report(page) {
    const direct = npusimRun(["--config", "edge-s", "--workload", "small_cnn", "--fusion", "greedy"]);
    await page.context().setOffline(true);
    const requests = [];
    page.on("request", r => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    await page.goto("file://" + join(direct.dir, "out", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    await page.waitForTimeout(300);
    const points = await page.$$eval("#roofline path.pt", p => p.length);
    const cycles = await value(page, "cycles");
    await page.screenshot({path: join(outDir, "report.png"), fullPage: false});
    await page.context().setOffline(false);
    assert(requests.length === 0, "nothing fetched: " + requests.join(", "));
    assert(cycles === direct.summary.cycles, "report cycles " + cycles + " = summary " + direct.summary.cycles);
    // One marker per op point, and per group or network point that is not exactly on an op's point.
    const all = JSON.parse(readFileSync(join(direct.dir, "out", "roofline.json"), "utf8")).points;
    const onAnOp = q => q.scope !== "op" && all.some(o => o.scope === "op" && o.level === q.level && o.intensity === q.intensity && o.ops_per_second === q.ops_per_second);
    const expected = all.filter(q => !onAnOp(q)).length;
    assert(points === expected && points > 10, "one marker per roofline point (" + points + " of " + expected + ")");
    rmSync(direct.dir, {recursive: true, force: true});
    // Why-not-fused: under the epilogue policy small_cnn is several groups; the reason of its
    // first boundary, as schedule.json writes it, is on the report page.
    const split = npusimRun(["--config", "edge-s", "--workload", "small_cnn", "--fusion", "epilogue"]);
    await page.goto("file://" + join(split.dir, "out", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    const boundary = JSON.parse(readFileSync(join(split.dir, "out", "schedule.json"), "utf8")).not_fused[0];
    const reasons = await page.$$eval("#not-fused td.reason", t => t.map(e => e.textContent));
    assert(boundary && boundary.reason.startsWith("policy: epilogue") && reasons.includes(boundary.reason),
      "the reason of " + (boundary && boundary.from) + " -> " + (boundary && boundary.to) + " is on the page: " +
      (boundary && boundary.reason) + " | " + reasons.slice(0, 3).join(" | "));
    rmSync(split.dir, {recursive: true, force: true});
  },
};

/** Median ms from a control change to updated views, over 10 changes of the array rows. */
async function measureLatency(page, url, workload) {
  await page.goto(url + "?config=edge-m&workload=" + workload + "&fusion=greedy");
  let id = await waitRun(page, "");
  const values = [16, 24, 40, 48, 56, 64, 20, 28, 36, 44];
  for (const rows of values) {
    await setControl(page, "rows", rows);
    id = await waitRun(page, id);
  }
  const t = (await page.evaluate(() => window.npusimTimings)).slice(-values.length).sort((a, b) => a - b);
  return {workload, median_ms: (t[4] + t[5]) / 2, min_ms: t[0], max_ms: t[t.length - 1]};
}

const {url, proc} = await startServer();
const browser = await chromium.launch({executablePath: chromiumPath, args: ["--no-sandbox"]});
let failed = 0;
try {
  if (measure) {
    const page = await browser.newPage({viewport: {width: 1280, height: 900}});
    for (const w of ["mobilenet_v2", "resnet50"]) console.log(JSON.stringify(await measureLatency(page, url, w)));
  } else {
    for (const [name, fn] of Object.entries(tests)) {
      if (only && name !== only) continue;
      const page = await browser.newPage({viewport: {width: 1280, height: 900}});
      const errors = [];
      page.on("pageerror", e => errors.push(e.message));
      try {
        await fn(page, url);
        assert(errors.length === 0, "no script errors: " + errors.join("; "));
        console.log("PASS " + name);
      } catch (e) {
        failed++;
        console.log("FAIL " + name + ": " + e.message);
        await page.screenshot({path: join(outDir, name + "-failed.png")}).catch(() => {});
      }
      await page.close();
    }
  }
} finally {
  await browser.close();
  proc.kill("SIGTERM");
}
console.log("screenshots in " + outDir);
process.exit(failed ? 1 : 0);
