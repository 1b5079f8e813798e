// Browser tests of the live page and report.html in headless Chromium (Debian's chromium, driven
// by playwright-core). Each test writes a screenshot into the output folder.
//   node tests/browser.mjs --npusim PATH --out DIR [--only NAME] [--measure]
// Exit 0 pass, 1 fail, 77 skipped (no chromium, no playwright-core, or the page is not built).
import {execFileSync, spawn} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
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
  intensity: Number(e.dataset.intensity), ops: Number(e.dataset.opsPerSecond), at: e.dataset.x + "," + e.dataset.y}));
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

/**
 * `npusim validate` on a CSV of zoo workloads on edge-s whose measured figures are made from
 * small_cnn's own simulated latency L (npusim run, greedy): "fast" measured L/2 (ratio 2, error
 * +100 %), "slow" measured 1.25 L (ratio 0.8, error -20 %), "kws" (ds_cnn_kws) a made-up 0.07 ms,
 * and an LLM row of a model type npusim does not read, which is skipped.
 * Returns {dir, out (the validate folder), v (its validation.json), L}.
 */
function npusimValidate() {
  const {dir, summary} = npusimRun(["--config", "edge-s", "--workload", "small_cnn", "--fusion", "greedy"]);
  const L = summary.seconds * 1e3;
  writeFileSync(join(dir, "bloom.json"), JSON.stringify({model_type: "bloom", hidden_size: 1024, n_layer: 24, vocab_size: 250880}));
  writeFileSync(join(dir, "m.csv"), "name,kind,workload,config,latency_ms,ttft_ms,source\n" +
    "fast,run,small_cnn,edge-s," + String(L / 2) + ",,half of npusim's\n" +
    "slow,run,small_cnn,edge-s," + String(L * 1.25) + ",,1.25 x npusim's\n" +
    "kws,run,ds_cnn_kws,edge-s,0.07,,made up\n" +
    "bloom,llm,bloom.json,edge-s,,120,a BLOOM on the board\n");
  const out = join(dir, "val");
  execFileSync(npusim, ["validate", join(dir, "m.csv"), "--quiet", "--out", out], {stdio: "ignore"});
  return {dir, out, v: JSON.parse(readFileSync(join(out, "validation.json"), "utf8")), L};
}

/** The validation view on `page` as the test compares it: points, lines, the tables' cells. */
const validationView = page => page.evaluate(() => {
  const cells = sel => [...document.querySelectorAll(sel + " tbody tr")].map(tr => [...tr.cells].map(td => td.textContent));
  return {
    plots: [...document.querySelectorAll("svg.validation-scatter")].map(s => ({metric: s.dataset.metric,
      points: [...s.querySelectorAll("g.point")].map(g => ({row: Number(g.dataset.row), label: g.querySelector("text.label").textContent})),
      identity: s.querySelectorAll("line.identity").length, band: s.querySelectorAll("polygon.band").length})),
    stats: cells("table.validation-stats"), figures: cells("table.validation-figures"), notSimulated: cells("table.validation-not-simulated"),
  };
});

/** The view against validation.json `v`: one point per figure, y = x, the statistics and the skipped row. */
function checkValidationView(view, v) {
  const figures = v.rows.flatMap(r => r.figures.map(f => ({row: r, f})));
  assert(view.plots.length === v.metrics.length && view.plots.length === 1, "one scatter per metric: " + view.plots.map(p => p.metric));
  const plot = view.plots[0];
  assert(plot.points.length === figures.length && figures.length === 3, "one point per figure (" + plot.points.length + " of " + figures.length + ")");
  assert(figures.every(({row}) => plot.points.some(p => p.row === row.row && p.label === row.name)), "each point named by its row");
  assert(plot.identity === 1 && plot.band === 1, "the y = x line and the 25 % band");
  const signed = x => (x >= 0 ? "+" : "") + x.toFixed(1) + " %";
  const m = v.metrics[0];
  const want = [m.metric + " (" + m.unit + ")", String(m.count), signed(m.median_error_percent), m.median_abs_error_percent.toFixed(1) + " %",
    m.max_abs_error_percent.toFixed(1) + " %"];
  assert(JSON.stringify(view.stats[0].slice(0, 5)) === JSON.stringify(want), "the statistics are validation.json's: " + view.stats[0] + " vs " + want);
  assert(view.stats[0][5].startsWith("row " + m.max_abs_error_row + " "), "the row of the largest |error|: " + view.stats[0][5]);
  for (const {row, f} of figures) {
    const drawn = view.figures.find(c => c[0] === String(row.row) && c[3] === f.metric);
    assert(drawn && drawn[6] === (f.simulated / f.measured).toFixed(3), row.name + ": ratio " + (drawn && drawn[6]) + " = simulated / measured");
    assert(drawn[4].endsWith(" ms") && drawn[5].endsWith(" ms"), row.name + ": figures with their unit: " + drawn);
  }
  const skipped = v.rows.find(r => r.status === "skipped");
  assert(view.notSimulated.length === 1 && view.notSimulated[0][1] === skipped.name && view.notSimulated[0][4] === skipped.skipped,
    "the skipped row and its reason: " + JSON.stringify(view.notSimulated));
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
    assert(after.at !== before.at, "the network point moved (" + before.at + " -> " + after.at + ")");
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
    const mainTopBefore = await page.$eval("#main", m => m.getBoundingClientRect().top);
    await setControl(page, "workload", "resnet50");
    await page.waitForFunction(() => document.body.dataset.state === "running");
    const running = await page.evaluate(() => {
      const b = document.getElementById("banner"), m = document.getElementById("main");
      return {text: b.textContent, top: b.getBoundingClientRect().top, mainTop: m.getBoundingClientRect().top,
        opacity: Number(getComputedStyle(m).opacity), href: document.getElementById("download").getAttribute("href")};
    });
    await page.screenshot({path: join(outDir, "stale_results-running.png")});
    assert(running.text.includes("previous run"), "the banner says the results are the previous run's: " + running.text);
    assert(running.top <= running.mainTop + 10 && running.top < 120, "the banner is at the top (" + running.top + ")");
    // It floats over the results: showing it moves nothing (no relayout and repaint of the page).
    assert(running.mainTop === mainTopBefore, "the results stay where they were (" + mainTopBefore + " -> " + running.mainTop + ")");
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
      assert(r.cells[3] === Number(cmp.runs[i].summary.cycles).toLocaleString("en-US"), "cycles as compare.json's: " + r.cells[3]);
    });
    const savedRows = () => page.$$eval("table.fusion-saved tbody tr", t => t.length);
    const pair = (b, r) => data.pairs.find(x => x.base === b && x.run === r);
    assert(data.pairs.length === 6 && pair(0, 1) && pair(2, 1), "a pair per ordered pair of runs (" + data.pairs.length + ")");
    assert(await savedRows() === pair(0, 1).groups.length, "first the second run beside the first");
    assert(await page.$eval("table.runs tr.picked", r => r.dataset.run) === "1", "the second run picked");
    await page.click('table.runs tr[data-run="2"]');
    assert(await page.$eval("table.runs tr.picked", r => r.dataset.run) === "2", "a click picks the third");
    assert(await savedRows() === pair(0, 2).groups.length, "its own per-group rows (" + pair(0, 2).groups.length + ")");
    // Any base: the third against the second.
    await page.check('table.runs input[name=base][value="1"]');
    assert(await page.evaluate(() => document.body.dataset.base) === "1" && await page.evaluate(() => document.body.dataset.run) === "2", "the base is choosable");
    assert(await savedRows() === pair(1, 2).groups.length, "the pair's own rows against the chosen base");
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
    const slowerId = await waitRun(page, id);
    const slower = await value(page, "ttft");
    assert(slower > ttft, "half the clock: a longer time to first token (" + ttft + " -> " + slower + ")");
    await setControl(page, "mode", "workload");
    await waitRun(page, slowerId);  // the id read before the switch: the workload's run may be drawn already
    assert(!(await page.$eval("#main", e => e.hidden)) && (await networkPoint(page)).ops > 0, "back to the workload's views");
  },
  // The headline's bound and the point it names are drawn together and labelled, in every mode;
  // the roof it names carries a label; the SRAM checkbox shows and hides the SRAM points; one
  // utilisation figure; intensities at the level they are judged at; the network point on top.
  async bound_point(page, url) {
    const check = async (what) => {
      const summary = await runFile(page, "summary.json");
      const level = summary.bound_roof === "SRAM" ? "sram" : "dram";
      const pt = await page.$eval("#roofline path.pt.bound-point", e => ({cls: e.getAttribute("class"), display: getComputedStyle(e).display,
        x: Number(e.dataset.x), y: Number(e.dataset.y)}));
      assert(pt.cls.includes("scope-network") && pt.cls.includes("level-" + level) && pt.display !== "none",
        what + ": the network's " + level + " point, the one the bound (" + summary.bound_roof + ") names, is drawn: " + pt.cls);
      const label = await page.$eval("#roofline text.bound-label", e => e.textContent);
      assert(label.includes(summary.bound_roof + " roof") && label.includes(summary.bound) && label.includes(level.toUpperCase() + " intensity"),
        what + ": the point is labelled with the bound: " + label);
      const roof = await page.$$eval("#roofline text.named-roof", t => t.map(e => e.textContent));
      const roofName = summary.bound_roof.startsWith("derated") ? "network's derated roof" : summary.bound_roof;
      assert(roof.length === 1 && roof[0].startsWith(roofName) && roof[0].includes("bounds the network"), what + ": the named roof is labelled: " + roof.join(" | "));
      const card = await page.$eval("#bound-roof", e => e.textContent);
      assert(card.includes(summary.bound_roof), what + ": the card names the same roof: " + card);
      return summary;
    };
    await page.setViewportSize({width: 1280, height: 800});
    await page.goto(url);  // the defaults: edge-m, mobilenet_v2, greedy, with its unfused companion
    let id = await waitRun(page, "");
    assert(await page.$$eval("line.arrow", l => l.length) > 0, "the compare view (unfused companion) is drawn");
    const sm = await check("mobilenet_v2 greedy beside unfused");
    await page.screenshot({path: join(outDir, "bound_point-1280.png"), fullPage: true});
    await page.locator("#roofline").screenshot({path: join(outDir, "bound_point-roofline-1280.png")});
    await page.screenshot({path: join(outDir, "bound_point-top-1280.png")});
    // The SRAM checkbox: this run's SRAM-level points are drawn beside the unfused companion and hidden by the box.
    const visibleSram = () => page.$$eval("#roofline path.pt.level-sram:not(.bound-point)", p => p.filter(e => getComputedStyle(e).display !== "none").length);
    const before = await visibleSram();
    const box = page.locator("#roofline .controls label", {hasText: "SRAM-level"}).locator("input");
    await box.uncheck();
    const hidden = await visibleSram();
    await box.check();
    assert(before > 5 && hidden === 0 && await visibleSram() === before, "the SRAM checkbox shows and hides the SRAM points (" + before + " -> " + hidden + ")");
    // One utilisation figure, its denominator named; the others in its tooltip.
    const util = await page.$eval("#mac-util", e => ({v: Number(e.dataset.value), text: e.textContent, tip: e.title, sub: e.closest(".card").textContent}));
    assert(util.v === sm.model_mac_utilization && util.tip.includes("executed") && util.tip.includes("peak") && /MAC slots/.test(util.sub),
      "MAC utilisation on the model's MACs with its denominator, the others in the tooltip: " + JSON.stringify(util));
    const utilCards = await page.$$eval("#summary .card", c => c.filter(e => /%/.test(e.querySelector(".v").textContent) || /of the MAC peak/.test(e.textContent)).map(e => e.querySelector(".k").textContent));
    assert(utilCards.length === 1 && utilCards[0] === "MAC utilisation", "one utilisation figure among the cards: " + utilCards.join(", "));
    // The table's intensity at its level.
    const head = await page.$eval("table.layers th[data-key=intensity]", e => e.textContent);
    const lv = await page.$$eval("table.layers td.int-col .lvl", t => t.map(e => e.textContent));
    assert(head.includes("level") && lv.length > 5 && lv.every(v => v === "SRAM" || v === "DRAM"), "intensity column labelled with the level: " + head + " " + lv.slice(0, 4));
    // The network point above the group squares: a real mouse reaches its tooltip.
    const net = page.locator("#roofline path.pt.role-cur.scope-network.level-dram");
    await net.scrollIntoViewIfNeeded();
    const b = await net.boundingBox();
    const top = await page.evaluate(([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.getAttribute("class"); }, [b.x + b.width / 2, b.y + b.height / 2]);
    assert(top && top.includes("scope-network"), "the network point is on top at its centre: " + top);
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.waitForFunction(() => document.getElementById("tip") && document.getElementById("tip").style.display === "block" && document.getElementById("tip").textContent.includes("network"));
    // Unfused: the same truths.
    await setControl(page, "fusion", "none");  // the companion's run, cached: drawn at once
    id = await waitRun(page, id);
    await check("mobilenet_v2 unfused");
    // ResNet-50 greedy on edge-m (SRAM-bound): the SRAM point beside the unfused companion.
    await setControl(page, "workload", "resnet50");
    await setControl(page, "fusion", "greedy");
    id = await waitRun(page, id);
    await page.waitForFunction(() => !document.body.dataset.partial);
    const r50 = await check("resnet50 greedy beside unfused");
    await page.setViewportSize({width: 1920, height: 1080});
    await page.screenshot({path: join(outDir, "bound_point-resnet50-1920.png"), fullPage: true});
    await page.screenshot({path: join(outDir, "bound_point-resnet50-top-1920.png")});
    await page.locator("#roofline").screenshot({path: join(outDir, "bound_point-resnet50-roofline-1920.png")});
    console.log("resnet50 greedy edge-m: " + r50.bound_text);
    const overlaps = await labelOverlaps(page);
    assert(overlaps.length === 0, "no label overlaps another: " + overlaps.join(" | "));
  },
  // The compare report: any run against any run; "what fusion saved" only within one config;
  // each run under its own roofs; axes that hold every run.
  async compare_base(page) {
    const dir = mkdtempSync(join(tmpdir(), "npusim-browser-compare-base-"));
    execFileSync(npusim, ["compare", "--config", "edge-s,edge-l", "--workload", "mobilenet_v2", "--fusion", "none,greedy", "--out", join(dir, "cmp")], {stdio: "ignore"});
    await page.setViewportSize({width: 1280, height: 800});
    await page.goto("file://" + join(dir, "cmp", "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    const names = await page.$$eval("table.runs tbody tr", t => t.map(r => r.cells[1].textContent));
    const idx = n => String(names.indexOf(n));
    const pick = async (base, run) => {
      await page.check('table.runs input[name=base][value="' + idx(base) + '"]');
      await page.click('table.runs tr[data-run="' + idx(run) + '"] td:nth-child(2)');
      await page.waitForFunction(([b, r]) => document.body.dataset.base === b && document.body.dataset.run === r, [idx(base), idx(run)]);
      return {title: await page.$eval("#fusion-saved h2", e => e.textContent), what: await page.$eval("#fusion-saved .body", e => e.dataset.what),
        otherRoofs: await page.$eval("#roofline svg g", () => Number(document.querySelector("#roofline svg [data-other-roofs]").dataset.otherRoofs)),
        outside: await page.$eval("#roofline .outside", e => e.textContent),
        inPlot: await page.$$eval("#roofline path.pt", (p) => { const s = document.querySelector("#roofline svg"); const [x0, x1] = s.dataset.xDomain.split(",").map(Number);
          const [y0, y1] = s.dataset.yDomain.split(",").map(Number); return p.every(e => { const i = Number(e.dataset.intensity), o = Number(e.dataset.opsPerSecond); return i >= x0 && i <= x1 && o >= y0 && o <= y1; }); })};
    };
    const both = await pick("edge-s_none", "edge-l_greedy");
    await page.screenshot({path: join(outDir, "compare_base-both.png"), fullPage: true});
    await page.locator("#roofline").screenshot({path: join(outDir, "compare_base-both-roofline.png")});
    await page.locator("#fusion-saved").screenshot({path: join(outDir, "compare_base-both-table.png")});
    assert(both.what === "both" && /hardware and fusion/.test(both.title) && !/fusion saved/.test(both.title), "edge-l greedy against edge-s none: not fusion's saving: " + both.title);
    assert((await page.textContent("#saved-both")).includes("not fusion's"), "the page says the time saved is not fusion's alone");
    assert(both.otherRoofs > 0, "the base's roofs are drawn (its points stand under them)");
    assert(both.inPlot && both.outside === "", "every point of both runs inside the axes: " + both.outside);
    const fusion = await pick("edge-l_none", "edge-l_greedy");
    assert(fusion.what === "fusion" && fusion.title.startsWith("What fusion saved") && fusion.otherRoofs === 0, "one config: what fusion saved: " + fusion.title);
    const hw = await pick("edge-s_greedy", "edge-l_greedy");
    assert(hw.what === "hardware" && hw.title.startsWith("What the hardware changed") && hw.otherRoofs > 0 && hw.inPlot, "one policy: what the hardware changed: " + hw.title);
    const back = await pick("edge-l_greedy", "edge-s_none");
    assert(back.what === "both" && back.inPlot, "any run against any run, the other way round");
    await page.setViewportSize({width: 1920, height: 1080});
    await page.screenshot({path: join(outDir, "compare_base-1920.png"), fullPage: true});
    rmSync(dir, {recursive: true, force: true});
  },
  // The live page's compare view: the pinned baseline as the base, its points under its own roofs.
  async compare_live(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    let id = await waitRun(page, "");
    await page.click("#pin");
    await page.waitForFunction(() => document.getElementById("pin").textContent.startsWith("Unpin"));
    id = await waitRun(page, "");
    await setControl(page, "config", "edge-l");
    id = await waitRun(page, id);
    await setControl(page, "compare-base", "baseline");
    await page.waitForFunction(() => document.body.dataset.compareBase === "baseline");
    const open = await page.$$eval("#roofline path.pt.role-unfused", p => p.length);
    const roofs = await page.$eval("#roofline [data-other-roofs]", e => Number(e.dataset.otherRoofs));
    const text = await page.textContent("#dram-bytes-view");
    await page.screenshot({path: join(outDir, "compare_live.png"), fullPage: false});
    assert(open > 3 && roofs > 0, "the baseline's ops open under its own roofs (" + open + " points, " + roofs + " roofs)");
    assert(text.includes("The hardware") && !text.includes("Fusion removed"), "the bytes view credits the hardware, not fusion: " + text.slice(0, 200));
  },
  // Controls: cores, parallel mode and L2 in the workload mode; batch, activation dtype and the
  // context in the LLM mode, each reaching the run.
  async controls(page, url) {
    await page.goto(url + "?config=edge-s&workload=small_cnn&fusion=greedy");
    let id = await waitRun(page, "");
    for (const c of ["cores", "parallel", "l2"]) assert(await page.$("#" + c), "a control " + c);
    await page.fill("#cores", "2");
    await page.$eval("#cores", e => e.dispatchEvent(new Event("change", {bubbles: true})));
    await setControl(page, "parallel", "tensor");
    await page.fill("#l2", "256");
    await page.$eval("#l2", e => e.dispatchEvent(new Event("change", {bubbles: true})));
    const deadline = Date.now() + 120000;
    let sm;
    for (;;) {
      id = await waitRun(page, id);
      sm = await runFile(page, "summary.json");
      if (sm.parallel && sm.l2 || Date.now() > deadline) break;
    }
    assert(sm.parallel && sm.parallel.mode === "tensor" && sm.parallel.cores === 2, "cores and parallel mode reach the run: " + JSON.stringify(sm.parallel && {mode: sm.parallel.mode, cores: sm.parallel.cores}));
    assert(sm.l2 && sm.l2.capacity_bytes === 256 * 1024, "the L2 size reaches the run");
    const q = new URL(page.url()).searchParams;
    assert(q.get("cores") === "2" && q.get("parallel") === "tensor" && q.get("l2") === "256", "the URL carries them: " + q);
    // LLM mode: batch and activation dtype.
    for (const [k, v] of [["context", "100"], ["prompt", "16"], ["generate", "4"], ["model", "SmolLM2-360M"], ["batch", "2"], ["act_dtype", "fp16"], ["cores", "1"], ["l2", "0"]]) await page.$eval("#" + k, (e, val) => { e.value = val; }, v);
    await setControl(page, "mode", "llm");
    id = await waitRun(page, id);
    assert(await page.$eval("#parallel-label", e => e.hidden), "no parallel control in the LLM mode");
    // 100 cached + 16 prompt + 4 generated tokens.
    assert((await page.textContent("#llm-context")).includes("120 tokens"), "the context shown: " + await page.textContent("#llm-context"));
    const l = (await runFile(page, "summary.json")).llm;
    assert(l.batch === 2 && l.widths.activations === "fp16", "batch and activation dtype reach the run: " + l.batch + " " + l.widths.activations);
    assert(l.context === 100 && l.decode.steps[0].context === 117, "the cached context reaches the run: " + l.context + ", first step at " + l.decode.steps[0].context);
    // The memory footprint against the DRAM of the config the run used (edge-s: channels x ranks x
    // banks x rows x columns x bus width / 8 of its preset).
    const share = await page.$eval("#memory-footprint", e => Number(e.dataset.value));
    const d = await page.evaluate(async () => (await (await fetch("/api/options")).json()).presets.find(p => p.name === "edge-s").config.dram);
    const capacity = d.channels * d.ranks * d.bank_groups * d.banks_per_group * d.rows * d.columns * d.bus_width_bits / 8;
    assert(Math.abs(share - l.memory_bytes.total / capacity) < 1e-12 && share > 0 && share < 1, "the footprint's share of DRAM: " + share);
    const parts = await page.$$eval("#llm-parts table.llm-parts", t => t.map(e => e.id));
    assert(parts.includes("parts-prefill") && parts.includes("parts-decode"), "the split by part: " + parts);
    // Each phase's bound in words, as its summary.json says it.
    assert((await page.textContent("#bound-prefill")) === l.prefill.bound && (await page.textContent("#bound-decode")) === l.decode.last_step.bound,
      "each phase's bound in words: " + l.prefill.bound + " / " + l.decode.last_step.bound);
    const kv = await page.$eval("#kv-share", e => Number(e.dataset.value));
    assert(kv > 0 && kv < 1 && Math.abs(kv - l.decode.last_step.kv_cache_read_bytes / l.decode.last_step.dram_bytes) < 1e-12, "the KV cache's share of the last step's bytes: " + kv);
    // The KV cache takes int4 (with scales); activations do not.
    const kvOptions = await page.$$eval("#kv_dtype option", o => o.map(e => e.value));
    const actOptions = await page.$$eval("#act_dtype option", o => o.map(e => e.value));
    assert(kvOptions.includes("int4") && !actOptions.includes("int4"), "int4 for the KV cache only: " + kvOptions + " / " + actOptions);
    // Speculative decoding: the model drafting for itself, 2 tokens a round at acceptance 0.5,
    // keeps 1 + 0.5 + 0.25 = 1.75 tokens a round; the card shows the run's tokens/s.
    for (const [k, v] of [["draft_tokens", "2"], ["acceptance", "0.5"]]) await page.$eval("#" + k, (e, val) => { e.value = val; }, v);
    await setControl(page, "draft", "SmolLM2-360M");
    id = await waitRun(page, id);
    const sp = (await runFile(page, "summary.json")).llm.speculative;
    assert(sp && sp.draft_model === "SmolLM2-360M" && sp.draft_tokens === 2 && sp.tokens_per_round === 1.75, "the draft reaches the run: " + JSON.stringify(sp && {d: sp.draft_model, k: sp.draft_tokens, e: sp.tokens_per_round}));
    assert(await page.$eval("#speculative-tokens-per-second", e => Number(e.dataset.value)) === sp.tokens_per_second, "the card shows speculative tokens/s");
    assert(new URL(page.url()).searchParams.get("draft") === "SmolLM2-360M", "the URL carries the draft");
    await page.screenshot({path: join(outDir, "controls-llm.png"), fullPage: true});
  },
  // An LLM change draws the prefill as soon as it is known and each decode sample as it lands;
  // the page and docs/serve.md agree on the decode sample count. A prompt of 512 and 64 new tokens
  // (about 1 s of simulation, half of it decode): a run of a fraction of that could end before a
  // page on a loaded machine reads its first state.
  async llm_stream(page, url) {
    await page.goto(url + "?mode=llm&config=edge-s&model=SmolLM2-360M&prompt=512&generate=64&fusion=greedy");
    await waitRun(page, "");
    const events = await page.evaluate(() => window.npusimLlmEvents);
    console.log("llm events (ms after the change): " + events.map(e => e.what + " " + Math.round(e.ms)).join(", "));
    const done = events.findIndex(e => e.what === "done"), pre = events.findIndex(e => e.what === "prefill");
    assert(pre >= 0 && pre < done, "the prefill drawn before the run ended: " + JSON.stringify(events));
    assert(events.filter((e, i) => e.what === "decode" && i < done).length >= 2, "decode samples drawn as they landed");
    const l = (await runFile(page, "summary.json")).llm;
    const note = await page.textContent("#llm-summary .note");
    const max = l.decode.sampling.max_samples;
    assert(note.includes("of at most " + max + " decode steps"), "the page names the sample bound: " + note);
    const doc = readFileSync(join(here, "..", "..", "docs", "serve.md"), "utf8");
    assert(doc.includes("at most " + max + " decode steps"), "docs/serve.md says the same count (" + max + ")");
  },
  // A vision-language model's image: the control is there for Qwen2-VL only (448x448 when it
  // appears), its value reaches the run and the URL, the encoder's figures are shown with their
  // units, a malformed value is said under the control and runs nothing, and a text-only model
  // hides the control and runs without an image.
  async llm_image(page, url) {
    const started = Date.now();
    await page.goto(url + "?mode=llm&config=edge-s&fusion=greedy&model=SmolLM2-360M&prompt=8&generate=2");
    let id = await waitRun(page, "");
    const hidden = () => page.$eval("#image-label", e => e.hidden || !!e.closest("[hidden]"));
    assert(await hidden() && await page.$eval("#image", e => e.disabled), "no image control for a text-only model");
    assert(!new URL(page.url()).searchParams.has("image"), "no image in the URL of a text-only model: " + page.url());
    assert(await page.$eval("#image", e => e.value) === "448x448", "the image's default is 448x448");
    // 56 x 56 px, the smallest image smart_resize keeps: 16 patches, 4 image tokens (a test of seconds).
    await page.$eval("#image", e => { e.value = "56x56"; });
    await setControl(page, "model", "Qwen2-VL-2B-Instruct");
    assert(!(await hidden()), "the image control is shown for Qwen2-VL-2B-Instruct");
    id = await waitRun(page, id);
    const l = (await runFile(page, "summary.json")).llm;
    assert(l.vision && l.vision.tokens === 4 && l.vision.patches === 16 && l.prefill.tokens === 8 + 4,
      "the image reaches the run: " + JSON.stringify(l.vision && {tokens: l.vision.tokens, patches: l.vision.patches}));
    assert(new URL(page.url()).searchParams.get("image") === "56x56", "the URL carries the image: " + page.url());
    // The encoder's figures with their units.
    assert(await value(page, "vision-seconds") === l.vision.seconds, "the encoder's time is the summary's");
    const secs = await page.textContent("#vision-seconds");
    assert(/^\d+(\.\d+)? [mµ]?s$/.test(secs), "the encoder's time with its unit: " + secs);
    assert(await page.textContent("#vision-tokens") === "4 image tokens", "the image tokens: " + await page.textContent("#vision-tokens"));
    assert(await value(page, "vision-macs") === l.vision.macs && /^\d+(\.\d+)? [kMGT]?MACs$/.test(await page.textContent("#vision-macs")),
      "the encoder's MACs with their unit: " + await page.textContent("#vision-macs"));
    // TTFT = encoder + prefill, both shown with units.
    const split = await page.$eval("#ttft-split", e => ({text: e.textContent, enc: Number(e.dataset.encoder), pre: Number(e.dataset.prefill)}));
    assert(split.enc === l.vision.seconds && split.pre === l.prefill.seconds && Math.abs(split.enc + split.pre - l.ttft_seconds) <= 1e-12 * l.ttft_seconds &&
      /^encoder \d+(\.\d+)? [mµ]?s \+ prefill \d+(\.\d+)? [mµ]?s$/.test(split.text), "TTFT split into encoder and prefill: " + split.text);
    // One weights figure: the card's is the footprint's, the language model's and the tower's together.
    assert(await value(page, "weight-bytes") === l.memory_bytes.weights && l.memory_bytes.weights === l.weight_bytes + l.vision.weight_bytes,
      "the weights card holds the vision tower's weights too: " + await value(page, "weight-bytes") + " vs " + l.memory_bytes.weights);
    assert((await page.textContent("#llm-summary")).includes("vision tower"), "the weights card names the vision tower's share");
    assert(await value(page, "ttft") === l.ttft_seconds, "TTFT is the summary's");
    assert((await page.$$eval("svg.llm-roofline circle.phase", c => c.map(e => e.dataset.phase))).join() === "vision,prefill,decode",
      "the encoder on the roofline beside the prefill and decode");
    await page.screenshot({path: join(outDir, "llm_image.png"), fullPage: true});
    // A malformed image: said under the control, nothing runs.
    await page.fill("#image", "56by56");
    await page.waitForFunction(() => document.getElementById("image-error").textContent !== "");
    const error = await page.textContent("#image-error");
    assert(error.includes("expected WIDTHxHEIGHT in pixels") && error.includes("56by56"), "the malformed image named: " + error);
    await page.waitForTimeout(600);  // past the 300 ms debounce: a run would have started by now
    assert(await page.evaluate(() => document.body.dataset.state) === "done" && await page.evaluate(() => document.body.dataset.runId) === id,
      "no run for a malformed image");
    // Back to a text-only model: the control hidden, the run without an image.
    await setControl(page, "model", "SmolLM2-360M");
    id = await waitRun(page, id);
    assert(await hidden(), "the image control hidden again for a text-only model");
    const text = (await runFile(page, "summary.json")).llm;
    assert(text.model === "SmolLM2-360M" && !text.vision && !(await page.$("#vision-seconds")) && !(await page.$("#ttft-split")), "no image, no encoder card");
    assert(!new URL(page.url()).searchParams.has("image"), "no image in the URL: " + page.url());
    // The shared URL of the image run opens with its image.
    await page.goto(url + "?mode=llm&config=edge-s&fusion=greedy&model=Qwen2-VL-2B-Instruct&prompt=8&generate=2&image=56x56");
    await waitRun(page, "");
    assert(await page.$eval("#image", e => e.value) === "56x56" && !(await hidden()), "the URL's image in the control");
    assert((await runFile(page, "summary.json")).llm.vision.tokens === 4, "the URL's image reaches the run");
    console.log("llm_image took " + ((Date.now() - started) / 1000).toFixed(1) + " s");
  },
  // The layout uses the width from 1280 to 2560 px without clipping a control or a number.
  async layout(page, url) {
    const clipped = () => page.evaluate(() => {
      const out = [];
      const ctx = document.createElement("canvas").getContext("2d");
      for (const s of document.querySelectorAll("aside select")) {
        if (s.closest("[hidden]")) continue;
        ctx.font = getComputedStyle(s).font;
        const w = Math.max(...[...s.options].map(o => ctx.measureText(o.text).width));
        if (w + 22 > s.clientWidth) out.push("select " + s.id + " " + Math.round(w) + " > " + s.clientWidth);
      }
      for (const l of document.querySelectorAll("aside label")) if (!l.closest("[hidden]") && l.scrollWidth > l.clientWidth + 1) out.push("label " + l.textContent.trim().slice(0, 20));
      for (const td of document.querySelectorAll("table.layers td:not(.name):not(.what)")) if (td.scrollWidth > td.clientWidth + 1) out.push("cell " + td.textContent.slice(0, 20));
      return out;
    });
    for (const [w, h] of [[1280, 800], [1920, 1080], [2560, 1440]]) {
      await page.setViewportSize({width: w, height: h});
      await page.goto(url + "?config=edge-s&workload=mobilenet_v2&fusion=greedy");
      await waitRun(page, "");
      const c = await clipped();
      const geo = await page.evaluate(() => {
        const m = document.getElementById("main").getBoundingClientRect(), secs = [...document.querySelectorAll("#main > section")].map(s => s.getBoundingClientRect());
        return {mainRight: m.right, right: Math.max(...secs.map(r => r.right)), doc: document.documentElement.scrollWidth, vw: innerWidth,
          sideBySide: secs.some((a, i) => secs.some((b, j) => i !== j && Math.abs(a.top - b.top) < 2 && a.left !== b.left))};
      });
      await page.screenshot({path: join(outDir, "layout-" + w + ".png"), fullPage: true});
      await page.screenshot({path: join(outDir, "layout-" + w + "-top.png")});
      await page.locator("#layers").screenshot({path: join(outDir, "layout-" + w + "-layers.png")});
      assert(c.length === 0, w + " px: nothing clipped: " + c.join(" | "));
      assert(geo.doc <= w && geo.right > w - 60, w + " px: the sections reach the right edge, no horizontal scroll: " + JSON.stringify(geo));
      if (w >= 1920) assert(geo.sideBySide, w + " px: sections side by side");
      // Bytes with units in "why not fused".
      const raw = await page.$$eval("#not-fused td.reason", t => t.map(e => [e.dataset.raw, e.textContent]));
      for (const [r, t] of raw) if (/\d{4,} B\b/.test(r)) assert(/\d( KiB| MiB| GiB)/.test(t), "bytes with units: " + t);
    }
    // The language model's split by part fits its section at the narrowest width.
    await page.setViewportSize({width: 1280, height: 800});
    await page.goto(url + "?mode=llm&config=edge-s&model=SmolLM2-360M&prompt=16&generate=4&fusion=greedy");
    await waitRun(page, "");
    const parts = await page.$$eval("table.llm-parts", ts => ts.map(t => {
      const s = t.closest("section").getBoundingClientRect(), r = t.getBoundingClientRect();
      const cells = [...t.querySelectorAll("th, td")].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 20));
      return {id: t.id, right: r.right, sectionRight: s.right, cells};
    }));
    assert(parts.length === 2, "the prefill's and the last decode step's split: " + parts.length);
    for (const p of parts) assert(p.right <= p.sectionRight && p.cells.length === 0, "1280 px: " + p.id + " inside its section, nothing clipped: " + JSON.stringify(p));
    await page.screenshot({path: join(outDir, "layout-1280-llm.png"), fullPage: true});
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
    const reasons = await page.$$eval("#not-fused td.reason", t => t.map(e => e.dataset.raw));
    assert(boundary && boundary.reason.startsWith("policy: epilogue") && reasons.includes(boundary.reason),
      "the reason of " + (boundary && boundary.from) + " -> " + (boundary && boundary.to) + " is on the page: " +
      (boundary && boundary.reason) + " | " + reasons.slice(0, 3).join(" | "));
    rmSync(split.dir, {recursive: true, force: true});
  },
  // report.html of npusim validate: the front end's validation view with validation.json's figures.
  async validate_report(page) {
    const {dir, out, v, L} = npusimValidate();
    await page.context().setOffline(true);
    const requests = [];
    page.on("request", r => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    await page.goto("file://" + join(out, "report.html"));
    await page.waitForFunction(() => document.body.dataset.ready === "1");
    await page.screenshot({path: join(outDir, "validate_report.png"), fullPage: true});
    await page.context().setOffline(false);
    assert(requests.length === 0, "nothing fetched: " + requests.join(", "));
    const view = await validationView(page);
    checkValidationView(view, v);
    // On paper: L against L/2 is a ratio of 2 and an error of +100 %; against 1.25 L, 0.8 and -20 %.
    const fast = view.figures.find(c => c[1] === "fast"), slow = view.figures.find(c => c[1] === "slow");
    assert(fast[6] === "2.000" && fast[7] === "+100.0 %" && slow[6] === "0.800" && slow[7] === "-20.0 %",
      "the made-up figures' ratio and error: " + fast + " | " + slow);
    assert(Math.abs(v.rows[0].figures[0].simulated - L) < 1e-9 * L, "validate simulates as npusim run does");
    // The hover box of a point says its figures.
    await page.hover("svg.validation-scatter g.point[data-row='1'] circle");
    const tip = await page.textContent("#tip");
    assert(tip.includes("row 1: fast") && tip.includes("ratio (simulated / measured): 2.000") && tip.includes("error: +100.0 %"), "the tooltip: " + tip);
    rmSync(dir, {recursive: true, force: true});
  },
  // The live page opens a validation.json read in the browser and draws the same view; a broken
  // file gets a message on the page, and a hostile name stays text.
  async validation_open(page, url) {
    const {dir, out, v} = npusimValidate();
    await page.goto(url);
    await page.waitForSelector("#open-validation");
    await page.setInputFiles("#open-validation", join(out, "validation.json"));
    await page.waitForSelector("#validation-main svg.validation-scatter");
    await page.screenshot({path: join(outDir, "validation_open.png"), fullPage: true});
    const view = await validationView(page);
    checkValidationView(view, v);
    assert(await page.$eval("#main", e => e.hidden), "the run's views give way to the validation view");
    const report = await page.context().browser().newPage();
    await report.goto("file://" + join(out, "report.html"));
    await report.waitForFunction(() => document.body.dataset.ready === "1");
    assert(JSON.stringify(await validationView(report)) === JSON.stringify(view), "the same view as report.html");
    await report.close();
    await page.click("#close-validation");
    assert(!(await page.$("#validation-main")) && !(await page.$eval("#main", e => e.hidden)), "back to the live run");
    const open = async (name, text) => {
      await page.$eval("#validation-error", e => { e.textContent = ""; });
      await page.setInputFiles("#open-validation", {name, mimeType: "application/json", buffer: Buffer.from(text)});
      await page.waitForFunction(() => document.getElementById("validation-error").textContent !== "" || document.getElementById("validation-main"));
      return page.textContent("#validation-error");
    };
    let message = await open("broken.json", "this is not JSON");
    assert(message === "broken.json is not JSON", "not JSON: " + message);
    message = await open("shape.json", JSON.stringify({rows: [{row: 1}], metrics: []}));
    assert(message === "shape.json is not a validation.json of npusim validate: rows[0]: expected `name` to be a string", "wrong shape: " + message);
    message = await open("big.json", " ".repeat(16 * 1024 * 1024 + 1));
    assert(message.startsWith("big.json is 16,777,217 bytes"), "too large: " + message);
    assert(!(await page.$("#validation-main")), "no view from a broken file");
    // A row name that would be markup is drawn as text.
    const hostile = structuredClone(v);
    hostile.rows[0].name = "<img src=x onerror=\"window.pwned=1\">";
    message = await open("hostile.json", JSON.stringify(hostile));
    assert(message === "" && (await page.$$eval("#validation-main img", i => i.length)) === 0, "no markup from the file");
    const labels = await page.$$eval("svg.validation-scatter text.label", t => t.map(e => e.textContent));
    assert(labels.includes(hostile.rows[0].name) && !(await page.evaluate(() => window.pwned)), "the name shown as text: " + labels);
    rmSync(dir, {recursive: true, force: true});
  },
};

/**
 * Median ms from a control change to the run drawn, and to its unfused companion drawn beside
 * it, over 10 changes of the array rows (logged, never asserted).
 */
async function measureLatency(page, url, workload) {
  await page.goto(url + "?config=edge-m&workload=" + workload + "&fusion=greedy");
  let id = await waitRun(page, "");
  const values = [16, 24, 40, 48, 56, 64, 20, 28, 36, 44];
  for (const rows of values) {
    await setControl(page, "rows", rows);
    id = await waitRun(page, id);
  }
  const median = a => { const t = a.slice(-values.length).sort((x, y) => x - y); return Math.round((t[4] + t[5]) / 2); };
  // The painted time lands a frame after the draw: wait for the last change's.
  await page.waitForFunction(n => window.npusimPaintTimings.length >= n, values.length + 1);
  const t = await page.evaluate(() => [window.npusimTimings, window.npusimCompanionTimings, window.npusimPaintTimings, window.npusimPhases]);
  const phases = {};
  for (const k of ["posted", "server", "run-done", "files", "drawn", "painted"]) phases[k] = median(t[3].map(p => p[k]));
  return {workload, drawn_median_ms: median(t[0]), painted_median_ms: median(t[2]), companion_median_ms: median(t[1]),
    phase_medians_ms: phases, painted_ms: t[2].slice(-values.length).map(Math.round)};
}

/** ms from an LLM change to its prefill drawn, each decode sample drawn and the whole run. */
async function measureLlm(page, url) {
  const out = [];
  for (const prompt of [64, 128, 256]) {
    await page.goto(url + "?mode=llm&config=edge-m&model=SmolLM2-360M&prompt=" + prompt + "&generate=32&fusion=greedy");
    await waitRun(page, "");
    const ev = await page.evaluate(() => window.npusimLlmEvents);
    out.push({prompt, events: ev.map(e => e.what + " " + Math.round(e.ms) + " ms").join(", ")});
  }
  return out;
}

const {url, proc} = await startServer();
const browser = await chromium.launch({executablePath: chromiumPath, args: ["--no-sandbox"]});
let failed = 0;
try {
  if (measure) {
    const page = await browser.newPage({viewport: {width: 1280, height: 900}});
    for (const w of ["mobilenet_v2", "resnet50"]) console.log(JSON.stringify(await measureLatency(page, url, w)));
    for (const r of await measureLlm(page, url)) console.log(JSON.stringify(r));
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
