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

/** Waits until a run other than `previous` is drawn and its points' transition has ended. */
async function waitRun(page, previous) {
  await page.waitForFunction(prev => {
    const b = document.body.dataset;
    return b.runId && b.runId !== prev && b.settled === b.runId && b.state === "done";
  }, previous, {timeout: 120000});
  return page.evaluate(() => document.body.dataset.runId);
}
const networkPoint = page => page.$eval("path.pt.role-cur.scope-network.level-dram", e => ({
  intensity: Number(e.dataset.intensity), ops: Number(e.dataset.opsPerSecond), transform: e.getAttribute("transform")}));
const value = (page, id) => page.$eval("#" + id, e => Number(e.dataset.value));

/** Text boxes of the roofline's labels that overlap another by more than a pixel each way. */
const labelOverlaps = page => page.evaluate(() => {
  const boxes = [...document.querySelectorAll("#roofline svg g.labels text")].map(e => ({t: e.textContent, r: e.getBoundingClientRect()}))
    .filter(b => b.r.width > 0);
  const out = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) out.push(boxes[i].t + " / " + boxes[j].t);
    }
  return out;
});
const fetchJson = (page, path) => page.evaluate(p => fetch(p).then(r => r.json()), path);
const runFile = (page, name) => page.evaluate(n => fetch("/api/runs/" + document.body.dataset.runId + "/files/" + n).then(r => r.json()), name);
const tickTexts = page => page.$$eval("#roofline svg g.axis text", t => t.map(e => e.textContent));
const hasExponent = text => /\d(\.\d+)?e[+-]?\d/.test(text);

async function setControl(page, id, v) {
  await page.$eval("#" + id, (e, val) => { e.value = val; e.dispatchEvent(new Event("change", {bubbles: true})); }, String(v));
}

/**
 * The LLM views against summary.json's llm block `l`: one marker per generated token, the
 * simulated ones as the summary marks them, both phases at their intensity and performance
 * (ops = 2 x MACs over DRAM bytes and seconds) on the plot's log axes, real ticks.
 */
async function checkLlmViews(page, l) {
  const steps = await page.$$eval("svg.llm-latency circle.step", c => c.map(e => ({simulated: e.classList.contains("simulated"),
    context: Number(e.dataset.context), seconds: Number(e.dataset.seconds)})));
  assert(steps.length === l.generate, "one marker per generated token (" + steps.length + " of " + l.generate + ")");
  assert(steps.every((s, i) => s.simulated === l.decode.steps[i].simulated && s.context === l.decode.steps[i].context &&
    s.seconds === l.decode.steps[i].seconds), "each marker is its step: context, latency, simulated or not");
  assert(steps.filter(s => s.simulated).length === l.decode.simulated_steps && l.decode.simulated_steps < l.generate,
    "simulated and interpolated steps told apart (" + l.decode.simulated_steps + " simulated)");
  const svg = await page.$eval("svg.llm-roofline", e => ({x: e.dataset.xDomain.split(",").map(Number), xr: e.dataset.xRange.split(",").map(Number),
    y: e.dataset.yDomain.split(",").map(Number), yr: e.dataset.yRange.split(",").map(Number)}));
  const at = (v, d, r) => r[0] + (r[1] - r[0]) * Math.log10(v / d[0]) / Math.log10(d[1] / d[0]);
  const dots = await page.$$eval("svg.llm-roofline circle.phase", c => c.map(e => ({phase: e.dataset.phase,
    cx: Number(e.getAttribute("cx")), cy: Number(e.getAttribute("cy"))})));
  const bytes = l.decode.steps.reduce((s, x) => s + x.dram_bytes, 0), macs = l.decode.steps.reduce((s, x) => s + x.macs, 0);
  const expect = {prefill: [2 * l.prefill.macs / l.prefill.dram_bytes, 2 * l.prefill.macs / l.prefill.seconds],
    decode: [2 * macs / bytes, 2 * macs / l.decode.seconds]};
  assert(dots.length === 2, "a dot per phase (" + dots.length + ")");
  for (const d of dots) {
    const [i, perf] = expect[d.phase];
    assert(Math.abs(d.cx - at(i, svg.x, svg.xr)) < 0.01 && Math.abs(d.cy - at(perf, svg.y, svg.yr)) < 0.01,
      d.phase + " at " + i + " ops/B, " + perf + " ops/s: (" + d.cx + ", " + d.cy + ")");
  }
  // Each prompt token reuses the weights the prefill reads; a decode step reads them for one token.
  assert(expect.prefill[0] > 4 * expect.decode[0], "the prefill far right of decode (" + expect.prefill[0] + " vs " + expect.decode[0] + " ops/B)");
  for (const sel of ["svg.llm-latency", "svg.llm-roofline"]) {
    const ticks = await page.$$eval(sel + " g.axis text", t => t.map(e => e.textContent));
    assert(ticks.length >= 6 && !ticks.some(hasExponent), sel + ": real ticks, no exponent: " + ticks.join(" "));
  }
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
  // Doubling the clock moves the network marker up (not the axes down); the axes keep their ticks,
  // the old position stays as a faded trail, the top ops are labelled, no overlap.
  async axes_fixed(page, url) {
    await page.goto(url + "?config=edge-m&workload=mobilenet_v2&fusion=greedy");
    const first = await waitRun(page, "");
    const pos = () => page.$eval("path.pt.role-cur.scope-network.level-dram", e => ({x: Number(e.dataset.x), y: Number(e.dataset.y), ops: Number(e.dataset.opsPerSecond)}));
    const before = await pos(), ticks = await tickTexts(page);
    await page.locator("#roofline").screenshot({path: join(outDir, "axes_fixed-before.png")});
    const clock = Number(await page.$eval("#clock", e => e.value));
    await setControl(page, "clock", 2 * clock);
    await waitRun(page, first);
    const after = await pos();
    await page.locator("#roofline").screenshot({path: join(outDir, "axes_fixed-after.png")});
    assert(after.ops > before.ops, "a doubled clock: more ops/s (" + before.ops + " -> " + after.ops + ")");
    assert(after.y < before.y - 5, "the network marker moved up in pixels (" + before.y + " -> " + after.y + ")");
    assert(after.x >= before.x - 0.5, "and not left (" + before.x + " -> " + after.x + ")");
    assert(JSON.stringify(await tickTexts(page)) === JSON.stringify(ticks), "the axis ticks stay the same");
    const trail = await page.$$eval("#roofline circle.trail-mark.scope-network", c => c.length);
    assert(trail === 1, "the network's previous position is a faded trail mark (" + trail + ")");
    const opLabels = await page.$$eval("#roofline text.point-label.scope-op, #roofline text.point-label.scope-group", t => t.map(e => e.textContent));
    assert(opLabels.length >= 3, "the top ops are labelled: " + opLabels.join(", "));
    const overlaps = await labelOverlaps(page);
    assert(overlaps.length === 0, "no label overlaps another: " + overlaps.join(" | "));
    // Rescale is explicit: after it the axes fit this run.
    await page.click("#rescale");
    assert(await page.$$eval("path.pt.role-cur.scope-network.level-dram", p => p.length) === 1, "the network point is still drawn after a rescale");
  },
  // One definition of "bound", the same words in the CLI, summary.json, report.html and the live
  // page, naming the roof the plot draws; ridge points on every roof.
  async bound_words(page, url) {
    await page.goto(url + "?config=edge-m&workload=mobilenet_v2&fusion=greedy");
    await waitRun(page, "");
    const summary = await runFile(page, "summary.json"), roofline = await runFile(page, "roofline.json");
    assert(typeof summary.bound_text === "string" && summary.bound_text.startsWith(summary.bound + ":"), "summary.json's bound_text: " + summary.bound_text);
    const shown = await page.textContent("#bound-text");
    assert(shown.includes(summary.bound_text), "the page shows summary.json's words: " + shown);
    const net = roofline.points.find(q => q.scope === "network" && q.level === "dram");
    assert(net.bound_text === summary.bound_text, "roofline.json and summary.json agree");
    if (net.bound_roof.startsWith("derated")) {
      // The plot must show the roof the words name: the network's derated roof as a line.
      const line = await page.$eval("#roofline line.derated-network", e => Number(e.dataset.value));
      assert(Math.abs(line - net.derated_peak) < 1e-6 * net.derated_peak, "the network's derated roof is drawn at its value");
      assert(net.derate_reason && summary.bound_text.includes(net.derate_reason), "the words give the reason: " + summary.bound_text);
    }
    const comp = roofline.roofs.filter(r => r.kind === "compute").length, mem = roofline.roofs.filter(r => r.kind === "memory").length;
    assert(await page.$$eval("#roofline circle.ridge", c => c.length) === comp * mem, "a ridge point where each memory roof meets each compute roof");
    // Hovering the network point shows the same sentence.
    await page.dispatchEvent("path.pt.role-cur.scope-network.level-dram", "mouseenter");
    await page.waitForFunction(t => document.getElementById("tip").textContent.includes(t), summary.bound_text);
    // Depthwise ops name the derated roof and why.
    const dw = summary.ops.find(o => o.kind === "conv2d" && o.derate_reason && o.derate_reason.startsWith("depthwise"));
    assert(dw, "a depthwise conv of MobileNetV2 says why its roof is derated");
    assert(dw.bound_text.includes(dw.derate_reason), "its sentence carries the reason: " + dw.bound_text);
    // The CLI prints the same sentence.
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-run-"));
    const out = execFileSync(npusim, ["run", "--config", "edge-m", "--workload", "mobilenet_v2", "--fusion", "greedy", "--out", join(dir, "out")], {encoding: "utf8"});
    assert(out.includes("bound: " + summary.bound_text), "npusim run prints the same words: " + out);
    // And report.html.
    await page.goto("file://" + join(dir, "out", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    assert((await page.textContent("#bound-text")).includes(summary.bound_text), "report.html shows the same words");
    rmSync(dir, {recursive: true, force: true});
  },
  // Without parameters the page opens on the documented defaults.
  async defaults(page, url) {
    await page.goto(url);
    await waitRun(page, "");
    const v = await page.evaluate(() => ["config", "workload", "fusion"].map(id => document.getElementById(id).value));
    assert(JSON.stringify(v) === JSON.stringify(["edge-m", "mobilenet_v2", "greedy"]), "edge-m / mobilenet_v2 / greedy: " + v);
    const summary = await runFile(page, "summary.json");
    assert(summary.workload === "mobilenet_v2" && summary.config_name === "edge-m" && summary.fusion === "greedy", "the run is the default one");
  },
  // A run in flight and a failed run dim the old results and say so at the top; the download link
  // never points to an older run.
  async stale_results(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    const first = await waitRun(page, "");
    const cycles = await value(page, "cycles");
    assert((await page.getAttribute("#download", "href")).includes(first), "the download link is this run's");
    await setControl(page, "workload", "resnet50");
    await page.waitForFunction(() => document.body.dataset.state === "running");
    const running = await page.evaluate(() => {
      const b = document.getElementById("banner"), m = document.getElementById("main");
      return {text: b.textContent, top: b.getBoundingClientRect().top, mainTop: m.getBoundingClientRect().top,
        opacity: Number(getComputedStyle(m).opacity), href: document.getElementById("download").getAttribute("href")};
    });
    await page.screenshot({path: join(outDir, "stale_results-running.png")});
    assert(running.text.includes("previous run"), "the banner says the results are the previous run's: " + running.text);
    assert(running.top < running.mainTop && running.top < 120, "the banner is at the top (" + running.top + ")");
    assert(running.opacity < 0.6, "the old results are dimmed (opacity " + running.opacity + ")");
    assert(running.href === null, "no download link to the old run while a new one is in flight: " + running.href);
    const second = await waitRun(page, first);
    assert((await page.getAttribute("#download", "href")).includes(second), "the download link follows the new run");
    // A run that fails: SRAM of 1 KiB holds no tile.
    await setControl(page, "sram", 1);
    await page.waitForFunction(() => document.body.dataset.state === "failed", null, {timeout: 120000});
    const failed = await page.evaluate(() => ({text: document.getElementById("banner").textContent, opacity: Number(getComputedStyle(document.getElementById("main")).opacity),
      href: document.getElementById("download").getAttribute("href"), top: document.getElementById("banner").getBoundingClientRect().top}));
    await page.screenshot({path: join(outDir, "stale_results-failed.png")});
    assert(failed.text.startsWith("The run failed") && failed.text.includes("previous run"), "the failure and what is shown, at the top: " + failed.text);
    assert(failed.top < 120, "the failure is said at the top (" + failed.top + ")");
    assert(failed.opacity < 0.6 && failed.href === null, "old results dimmed, no download link: " + JSON.stringify(failed));
    assert(await value(page, "cycles") !== cycles, "the results shown are the last good run's (resnet50), not the first");
  },
  // Labels never overlap, no number in exponent form, a baseline of another workload is marked and
  // compared with nothing.
  async labels_and_baseline(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    let id = await waitRun(page, "");
    await page.click("#pin");
    await page.waitForFunction(() => document.getElementById("pin").textContent.startsWith("Unpin"));
    await setControl(page, "workload", "ds_cnn_kws");
    id = await waitRun(page, id);
    await page.screenshot({path: join(outDir, "labels_and_baseline.png")});
    const label = await page.$eval("#roofline text.base-label", e => e.textContent);
    assert(label.includes("another workload"), "the baseline is marked as another workload: " + label);
    assert(await page.$$eval(".card .delta", d => d.length) === 0, "no ratios to a baseline of other work");
    assert((await page.textContent("#baseline-other")).includes("small_cnn"), "the headline says which workload the baseline ran");
    const overlaps = await labelOverlaps(page);
    assert(overlaps.length === 0, "no label overlaps another: " + overlaps.join(" | "));
    const text = await page.evaluate(() => document.getElementById("main").innerText);
    assert(!hasExponent(text), "no number in exponent form: " + (text.match(/.{20}\d(\.\d+)?e[+-]?\d.{10}/) || [""])[0]);
  },
  // Every op in a table that sorts, filters and links to the plot and the timeline; no horizontal
  // scroll at 1440 px.
  async layer_table(page, url) {
    await page.setViewportSize({width: 1440, height: 900});
    await page.goto(url + "?config=edge-m&workload=mobilenet_v2&fusion=greedy");
    await waitRun(page, "");
    await page.waitForSelector("svg.timeline rect.bin");
    const summary = await runFile(page, "summary.json");
    const ran = summary.ops.filter(o => o.cycles > 0 || o.time_share > 0).length;
    const rows = () => page.$$eval("table.layers tbody tr", t => t.map(r => r.dataset.name));
    assert((await rows()).length === ran, "one row per op that ran (" + (await rows()).length + " of " + ran + ")");
    const widths = await page.evaluate(() => ({doc: document.documentElement.scrollWidth, sec: [document.getElementById("layers").scrollWidth, document.getElementById("layers").clientWidth],
      box: [document.querySelector(".layer-scroll").scrollWidth, document.querySelector(".layer-scroll").clientWidth]}));
    assert(widths.doc <= 1440 && widths.sec[0] <= widths.sec[1] && widths.box[0] <= widths.box[1], "no horizontal scroll at 1440 px: " + JSON.stringify(widths));
    // Sort by cycles, both ways.
    const col = async key => page.$$eval("table.layers tbody tr", (t, k) => {
      const i = [...document.querySelectorAll("table.layers th")].findIndex(h => h.dataset.key === k);
      return t.map(r => Number(r.children[i].textContent.replace(/,/g, "")));
    }, key);
    await page.click("table.layers th[data-key=cycles]");
    let c = await col("cycles");
    assert(c.every((v, i) => i === 0 || c[i - 1] >= v), "sorted by cycles, largest first");
    await page.click("table.layers th[data-key=cycles]");
    c = await col("cycles");
    assert(c.every((v, i) => i === 0 || c[i - 1] <= v), "then smallest first");
    // Filter.
    const name = summary.ops.filter(o => o.cycles > 0).sort((a, b) => b.time_share - a.time_share)[0].name;
    await page.fill("#layer-filter", name);
    const filtered = await rows();
    assert(filtered.length >= 1 && filtered.every(n => n.includes(name)) && filtered.includes(name), "the filter keeps the matching rows: " + filtered.join(","));
    // Row -> roofline point and timeline bins.
    await page.hover("table.layers tbody tr[data-name=\"" + name + "\"]");
    await page.waitForFunction(n => document.querySelectorAll("#roofline path.pt.hl[data-name=\"" + n + "\"]").length > 0, name);
    const bins = await page.$$eval("svg.timeline rect.bin.hl", b => b.map(e => e.dataset.op));
    assert(bins.length > 0 && bins.every(o => o === name), "its timeline bins are highlighted (" + bins.length + ")");
    await page.screenshot({path: join(outDir, "layer_table.png"), fullPage: true});
    // Point -> row.
    await page.fill("#layer-filter", "");
    const other = summary.ops.filter(o => o.cycles > 0 && o.name !== name).sort((a, b) => b.time_share - a.time_share)[0].name;
    await page.dispatchEvent("#roofline path.pt.role-cur.level-dram[data-name=\"" + other + "\"]", "mouseenter");
    await page.waitForFunction(n => { const r = document.querySelector("table.layers tr.hl"); return r && r.dataset.name === n; }, other);
  },
  // The compare report has the per-group "what fusion saved" table with bars and the timelines with
  // op names and DRAM bandwidth.
  async compare_report(page) {
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-compare-"));
    const out = execFileSync(npusim, ["compare", "--config", "edge-m", "--workload", "mobilenet_v2", "--fusion", "none,greedy", "--out", join(dir, "cmp")], {encoding: "utf8"});
    const cmp = JSON.parse(readFileSync(join(dir, "cmp", "compare.json"), "utf8"));
    await page.setViewportSize({width: 1440, height: 900});
    await page.goto("file://" + join(dir, "cmp", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    await page.screenshot({path: join(outDir, "compare_report.png"), fullPage: true});
    const rows = await page.$$eval("table.fusion-saved tbody tr", t => t.map(r => r.dataset.name));
    assert(rows.length === cmp.groups.length, "one row per group (" + rows.length + " of " + cmp.groups.length + ")");
    const best = cmp.groups.slice().sort((a, b) => (b.a.seconds - b.b.seconds) - (a.a.seconds - a.b.seconds))[0].group;
    assert(rows[0] === best, "sorted by time saved, as npusim compare prints it: " + rows[0] + " vs " + best);
    assert(out.includes(best.slice(0, 31)), "the CLI's table starts with the same group");
    assert(await page.$$eval("table.fusion-saved .saved-bar", b => b.filter(e => e.getBoundingClientRect().width > 0).length) > 0, "with bars");
    assert(await page.$$eval("svg.timeline", s => s.length) === 2, "a timeline per run");
    const names = await page.$$eval("#timeline svg.timeline g.track text.opname", t => t.map(e => e.textContent));
    assert(names.length >= 5, "op names on the tracks: " + names.slice(0, 5).join(", "));
    const peak = await page.$eval("#timeline g.dram-bandwidth path", e => Number(e.dataset.peak));
    assert(peak > 0, "DRAM bandwidth over time");
    rmSync(dir, {recursive: true, force: true});
  },
  // report.html of a three-way compare holds every run: a table of all three (the figures of
  // compare.json), each pickable; picking one sets it beside the first (its own per-group "what
  // fusion saved" rows), and every run brings its timeline.
  async compare_three(page) {
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-compare3-"));
    execFileSync(npusim, ["compare", "--config", "edge-m", "--workload", "small_cnn", "--fusion", "none,epilogue,greedy", "--out", join(dir, "cmp")], {stdio: "ignore"});
    const cmp = JSON.parse(readFileSync(join(dir, "cmp", "compare.json"), "utf8"));
    const data = JSON.parse(await (async () => {
      await page.goto("file://" + join(dir, "cmp", "report.html"));
      await page.waitForFunction(() => document.body.dataset.ready === "1");
      return page.$eval("#npusim-data", e => e.textContent);
    })());
    await page.screenshot({path: join(outDir, "compare_three.png"), fullPage: true});
    const rows = await page.$$eval("table.runs tbody tr", t => t.map(r => ({run: Number(r.dataset.run), cells: [...r.cells].map(c => c.textContent)})));
    assert(rows.length === 3 && cmp.runs.length === 3, "a row per run (" + rows.length + ")");
    rows.forEach((r, i) => {
      assert(r.cells[1] === cmp.runs[i].name, "run names as compare.json's: " + r.cells[1] + " vs " + cmp.runs[i].name);
      assert(r.cells[2] === Number(cmp.runs[i].summary.cycles).toLocaleString("en-US"), "cycles as compare.json's: " + r.cells[2]);
    });
    const savedRows = () => page.$$eval("table.fusion-saved tbody tr", t => t.length);
    assert(data.pairs.length === 2 && data.pairs[0].run === 1 && data.pairs[1].run === 2, "a pair per run after the first");
    assert(await savedRows() === data.pairs[0].groups.length, "first the second run beside the first");
    assert(await page.$eval("table.runs tr.picked", r => r.dataset.run) === "1", "the second run picked");
    await page.click('table.runs tr[data-run="2"]');
    assert(await page.$eval("table.runs tr.picked", r => r.dataset.run) === "2", "a click picks the third");
    assert(await savedRows() === data.pairs[1].groups.length, "its own per-group rows (" + data.pairs[1].groups.length + ")");
    assert(await page.$$eval("svg.timeline", s => s.length) === 3, "a timeline per run");
    rmSync(dir, {recursive: true, force: true});
  },
  // The sweep report's plots have real ticks, a front per pair and the 3-D front as a table.
  async sweep_report(page) {
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-sweep-"));
    execFileSync(npusim, ["sweep", join(here, "..", "..", "tests", "data", "sweep_small.yaml"), "--out", join(dir, "sw")], {stdio: "ignore"});
    execFileSync(npusim, ["sweep-report", join(dir, "sw")], {stdio: "ignore"});
    await page.goto("file://" + join(dir, "sw", "report", "report.html"));
    await page.screenshot({path: join(outDir, "sweep_report.png"), fullPage: true});
    const plots = await page.$$eval("svg.pareto", s => s.map(p => ({x: p.querySelectorAll("g.tick.x").length, y: p.querySelectorAll("g.tick.y").length,
      front: p.querySelector("path.front").getAttribute("d"), pair: p.querySelectorAll("circle.pair-front").length})));
    assert(plots.length === 3, "one plot per pair of the three objectives (" + plots.length + ")");
    for (const p of plots) {
      assert(p.x >= 3 && p.y >= 3, "real ticks on both axes: " + JSON.stringify(p));
      assert(p.pair >= 1 && (p.pair === 1 || /H.*V/.test(p.front)), "the pair's own front, as a staircase: " + JSON.stringify(p));
    }
    const table = await page.$$eval("table.front tr", t => t.length - 1);
    const front = readFileSync(join(dir, "sw", "report", "pareto.csv"), "utf8").trim().split("\n").slice(1).filter(l => l.split(",")[4] === "1").length;
    assert(table >= 1 && table === front, "the front over all three objectives as a table (" + table + " rows, " + front + " in pareto.csv)");
    rmSync(dir, {recursive: true, force: true});
  },
  // report.html of npusim llm: TTFT and tokens/s as summary.json says, one marker per generated
  // token (simulated ones filled, interpolated ones open), both phases where their figures put them
  // on the roofline.
  async llm_report(page) {
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-llm-"));
    execFileSync(npusim, ["llm", "--config", "edge-s", "--model", "SmolLM2-360M", "--prompt", "16", "--generate", "12",
      "--weight-dtype", "int4", "--quiet", "--out", join(dir, "out")], {stdio: "ignore"});
    const l = JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8")).llm;
    await page.context().setOffline(true);
    await page.goto("file://" + join(dir, "out", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    await page.screenshot({path: join(outDir, "llm_report.png"), fullPage: true});
    await page.context().setOffline(false);
    assert(await value(page, "ttft") === l.ttft_seconds, "TTFT on the page = summary's " + l.ttft_seconds);
    assert(await value(page, "tokens-per-second") === l.decode.tokens_per_second, "tokens/s = summary's");
    await checkLlmViews(page, l);
    rmSync(dir, {recursive: true, force: true});
  },
  // The live page's LLM mode: switching to it draws the decode-latency plot of the server's npusim
  // llm run; a hardware control reruns it (half the clock: a slower prefill).
  async llm_mode(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    const first = await waitRun(page, "");
    // The LLM controls set while hidden (no run: the workload mode ignores them), then the switch.
    await page.$eval("#prompt", e => { e.value = "16"; });
    await page.$eval("#generate", e => { e.value = "12"; });
    await page.$eval("#model", e => { e.value = "SmolLM2-360M"; });
    await setControl(page, "mode", "llm");
    const id = await waitRun(page, first);
    await page.screenshot({path: join(outDir, "llm_mode.png"), fullPage: false});
    const q = new URL(page.url()).searchParams;
    assert(q.get("mode") === "llm" && q.get("prompt") === "16" && q.get("model") === "SmolLM2-360M", "the URL carries the LLM parameters: " + q);
    assert(await page.$eval("#main", e => e.hidden) && !(await page.$eval("#llm-main", e => e.hidden)), "the LLM views replace the workload's");
    const l = (await runFile(page, "summary.json")).llm;
    assert(l.prompt === 16 && l.generate === 12, "the run's prompt and generate are the controls'");
    await checkLlmViews(page, l);
    const ttft = await value(page, "ttft");
    await setControl(page, "clock", 400);  // half of edge-s's 800 MHz
    await waitRun(page, id);
    const slower = await value(page, "ttft");
    assert(slower > ttft, "half the clock: a longer time to first token (" + ttft + " -> " + slower + ")");
    await setControl(page, "mode", "workload");
    await waitRun(page, await page.evaluate(() => document.body.dataset.runId));
    assert(!(await page.$eval("#main", e => e.hidden)) && (await networkPoint(page)).ops > 0, "back to the workload's views");
  },
  // report.html from npusim run: the same app, offline, the run's numbers.
  async report(page) {
    const direct = npusimRun(["--config", "edge-s", "--workload", "small_cnn", "--fusion", "greedy"]);
    await page.context().setOffline(true);
    const requests = [];
    page.on("request", r => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    await page.goto("file://" + join(direct.dir, "out", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
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
