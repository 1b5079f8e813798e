// The live page of `npusim serve`: controls -> POST /api/runs (debounced; a newer run of this
// tab's session cancels the one in flight) -> progress by server-sent events -> the views. Two
// modes: a workload (the zoo or an upload, as `npusim run`) or a language model (as `npusim llm`:
// TTFT, tokens/s, decode latency against context), on the same hardware controls. A
// validation.json the user opens is read in the browser and drawn in place of the run's views.
import "./style.css";
import {buildLlmPage, renderLlm, renderLlmPartial} from "./llm.js";
import {afterFrame, buildPage, renderPage, renderTimeline} from "./page.js";
import {esc, si} from "./format.js";
import {readValidationFile, renderValidation} from "./validation.js";

const $ = id => document.getElementById(id);
const TAB = Math.random().toString(36).slice(2, 10);  // this tab's session: its runs cancel each other
// Each slot's runs are numbered: a request that reaches the server after a newer one of its slot
// is refused (409) rather than cancelling the newer run (two changes in quick succession travel
// on two connections, in either order).
const sequence = {};
const DEBOUNCE_MS = 300;  // while a number is being typed; a committed change (select, Enter, blur) runs at once
// What the page opens on without URL parameters (docs/serve.md), where the server offers it.
const DEFAULTS = {config: "edge-m", workload: "mobilenet_v2", fusion: "greedy"};
// The LLM mode's controls: URL parameter, label, default (docs/serve.md); "" = the config's dtype.
const LLM = [
  {id: "model", label: "model", list: o => o.models, def: "SmolLM2-360M"},
  {id: "context", label: "cached context tokens", min: 0, max: o => o.max_context || 0, def: "0"},
  {id: "prompt", label: "prompt tokens", min: 1, max: o => o.max_prompt, def: "128"},
  // Chunked prefill (npusim llm --prefill-chunk): 0 = the whole prompt in one step.
  {id: "prefill_chunk", label: "prefill chunk (tokens, 0: whole)", min: 0, max: o => o.max_prefill_chunk || 0, def: "0"},
  {id: "generate", label: "generate tokens", min: 0, max: o => o.max_generate, def: "32"},
  {id: "batch", label: "batch (sequences)", min: 1, max: o => o.max_batch || 8, def: "1"},
  {id: "weight_dtype", label: "weight dtype", list: o => [""].concat(o.weight_dtypes), def: "int4"},
  {id: "act_dtype", label: "activation dtype", list: o => [""].concat(o.act_dtypes), def: ""},
  {id: "kv_dtype", label: "KV cache dtype", list: o => [""].concat(o.kv_dtypes), def: ""},
  // Speculative decoding: "" = none; the draft must have the model's vocabulary (the server says so).
  {id: "draft", label: "draft model", list: o => [""].concat(o.models), def: "", none: "none"},
  {id: "draft_tokens", label: "draft tokens a round", min: 1, max: o => o.max_draft_tokens || 16, def: "4"},
  {id: "acceptance", label: "acceptance", min: 0, max: () => 1, step: 0.05, def: "0.7"},
  // An image for a vision-language model (the request's llm.image, npusim llm --image WxH): shown
  // only for the models /api/options lists in llm.vision_models; empty = the language model alone.
  {id: "image", label: "image (W x H px)", text: true, def: "448x448", vision: true},
];
// The image control's format, as the server's parser reads it: digits, an x, digits (its range
// and the model's limits are the server's to check; its message names them).
const IMAGE_FORMAT = /^\d{1,6}x\d{1,6}$/;
// How a workload spreads over npu.cores (the request's `parallel`, as npusim run --parallel).
const PARALLEL = ["none", "data", "pipeline", "tensor", "auto"];
// How far beyond the presets' roofs the fixed axes reach: a doubled clock and a doubled array stay in view.
const SPACE_HEADROOM = 4;

// Hardware controls: URL parameter, config key for --set, how to read the preset's value
// (from the resolved config, /api/options) and how to write it.
const HW = [
  {id: "rows", label: "array rows", key: "npu.mac_array.rows", get: c => c.mac_array.rows, min: 1, max: 1024},
  {id: "cols", label: "array cols", key: "npu.mac_array.cols", get: c => c.mac_array.cols, min: 1, max: 1024},
  {id: "dataflow", label: "dataflow", key: "npu.mac_array.dataflow", get: c => c.mac_array.dataflow, list: "dataflows"},
  {id: "dtype", label: "dtype", key: "npu.mac_array.dtype", get: c => c.mac_array.dtype, list: "dtypes"},
  {id: "clock", label: "clock (MHz)", key: "npu.clock", get: c => c.core_clock_hz / 1e6, unit: " MHz", min: 1, max: 100000},
  {id: "sram", label: "SRAM (KiB)", key: "npu.sram.capacity", get: c => c.sram.capacity_bytes / 1024, unit: " KiB", min: 1, max: 1048576},
  {id: "banks", label: "SRAM banks", key: "npu.sram.banks", get: c => c.sram.banks, min: 1, max: 1024},
  {id: "buffers", label: "operand buffers", key: "npu.sram.operand_buffers", get: c => c.sram.operand_buffers, list: "operand_buffers"},
  {id: "dma", label: "DMA channels", key: "npu.dma.channels", get: c => c.dma.channels, min: 1, max: 64},
  {id: "outstanding", label: "outstanding bursts", key: "npu.dma.max_outstanding_bursts", get: c => c.dma.max_outstanding_bursts, min: 1, max: 1024},
  {id: "dram", label: "DRAM preset", key: "npu.dram.preset", get: c => c.dram.preset, list: "dram_presets"},
  {id: "dram_channels", label: "DRAM channels", key: "npu.dram.channels", get: c => c.dram.channels, min: 1, max: 32},
  {id: "lanes", label: "vector lanes", key: "npu.vector_unit.lanes", get: c => c.vector_unit.lanes, min: 1, max: 65536},
  {id: "cores", label: "cores", key: "npu.cores", get: c => c.cores, min: 1, max: 64},
  {id: "l2", label: "L2 (KiB, 0 = none)", key: "npu.l2.capacity", get: c => c.l2.capacity_bytes / 1024, unit: " KiB", min: 0, max: 1048576},
];

let validationMain = null;  // the validation view, while one is open
let currentUnf = null;  // the unfused companion of the run shown, once it landed
let options = null, page = null, llmPage = null, current = null, baseline = null, timer = null, generation = 0, changedAt = 0;
const cache = new Map();  // request JSON -> finished run (the simulator is deterministic)
window.npusimTimings = [];  // ms from a control change to the run drawn (read by the browser tests)
window.npusimCompanionTimings = [];  // ms from a control change to the unfused companion drawn beside it
window.npusimPaintTimings = [];  // ms from a control change to the end of the first frame that shows the run
// Where each change's time goes, as performance marks, each one's detail.ms from the change:
// "npusim:posted" (the run's first state came back), "npusim:run-done" (its final state),
// "npusim:files" (its results in hand), "npusim:drawn" (the headline and roofline drawn: the
// script's part), "npusim:painted" (the frame that shows them done). The browser tests log them,
// and the run's own time on the server (`server`), with --measure; a Chromium trace shows them on
// its timeline.
window.npusimPhases = [];
const mark = (name, started, into = null) => {
  const ms = performance.now() - started;
  performance.mark("npusim:" + name, {detail: {ms}});
  if (into) into[name] = ms;
  return ms;
};

function presetConfig(name) { return options.presets.find(p => p.name === name).config; }

function selectHtml(id, values, labels) {
  return '<select id="' + id + '">' + values.map((v, i) => '<option value="' + esc(v) + '">' + esc(labels ? labels[i] : v) + "</option>").join("") + "</select>";
}

function llmControlsHtml() {
  const o = options.llm;
  const input = c => c.text ? '<input type="text" id="' + c.id + '" value="' + esc(c.def) + '" placeholder="none" spellcheck="false" autocomplete="off">' :
    '<input type="number" id="' + c.id + '" min="' + c.min + '" max="' + c.max(o) + '" step="' + (c.step || 1) + '" value="' + c.def + '">';
  return LLM.map(c => "<label" + (c.vision ? ' id="' + c.id + '-label"' : "") + ">" + esc(c.label) + " " +
    (c.list ? selectHtml(c.id, c.list(o), c.list(o).map(v => v || c.none || "config's")) : input(c)) + "</label>" +
    (c.vision ? '<div id="' + c.id + '-error" class="error" role="alert"></div>' : "")).join("") +
    '<div class="context" id="llm-context"></div>';
}

/** Whether the chosen model takes an image (its config has a vision tower: /api/options llm.vision_models). */
const takesImage = () => (options.llm.vision_models || []).includes($("model").value);

/** Shows the image control for a vision-language model only; says what is wrong with a malformed value. */
function showImage() {
  const shown = takesImage(), v = $("image").value.trim();
  $("image-label").hidden = !shown;
  $("image").disabled = !shown;
  const bad = shown && v !== "" && !IMAGE_FORMAT.test(v);
  $("image").setCustomValidity(bad ? "expected WIDTHxHEIGHT in pixels" : "");
  $("image-error").textContent = bad ? "image: expected WIDTHxHEIGHT in pixels (such as 448x448), or empty for none; found '" + v + "'" : "";
  $("image-error").hidden = !bad;
  return !bad;
}

/** The context the last decode step attends over: the cached context, the prompt and the generated tokens (what the KV cache holds at the end). */
function showContext() {
  const el = $("llm-context");
  if (!el) return;
  const n = Number($("context").value || 0) + Number($("prompt").value) + Number($("generate").value);
  const image = takesImage() && $("image").value.trim() !== "";
  el.textContent = "context at the last step: " + (isFinite(n) ? n.toLocaleString("en-US") : "–") + " tokens (cached context + prompt + generate)" +
    (image ? ", and the image's tokens" : "");
}

function buildControls() {
  const c = $("controls");
  c.innerHTML =
    (options.llm ? '<label>mode ' + selectHtml("mode", ["workload", "llm"], ["workload", "language model"]) + "</label>" : "") +
    '<label>preset ' + selectHtml("config", options.presets.map(p => p.name)) + "</label>" +
    '<div id="workload-controls"><label>workload ' + selectHtml("workload", options.zoo) + "</label>" +
    '<label class="upload">upload ONNX / YAML / CSV <input type="file" id="upload" accept=".onnx,.yaml,.yml,.csv"></label><div id="upload-error" class="error"></div></div>' +
    (options.llm ? '<div id="llm-controls" hidden>' + llmControlsHtml() + "</div>" : "") +
    '<label>fusion ' + selectHtml("fusion", options.fusion) + "</label>" +
    '<label id="parallel-label">parallel ' + selectHtml("parallel", PARALLEL) + "</label>" +
    '<label id="objective-label">objective ' + selectHtml("objective", options.objectives) + "</label>" +
    HW.map(h => "<label>" + esc(h.label) + " " + (h.list ? selectHtml(h.id, options[h.list]) :
      '<input type="number" id="' + h.id + '" min="' + h.min + '" max="' + h.max + '" step="any">') + "</label>").join("") +
    '<div class="buttons"><button id="pin" type="button">Pin as baseline</button>' +
    '<label id="compare-label" title="The run the roofline, the DRAM bytes and the headline ratios set this run against">compare with <select id="compare-base">' +
    '<option value="unfused">unfused, same hardware</option><option value="baseline" disabled>pinned baseline</option></select></label>' +
    ' <a id="download" class="button" href="#">Download run folder</a></div>' +
    '<label class="upload open-validation">Open validation.json <input type="file" id="open-validation" accept=".json,application/json"></label>' +
    '<div id="validation-error" class="error" role="alert"></div>';
  $("config").addEventListener("change", () => { resetHardware(); changed(0); });
  for (const id of ["workload", "fusion", "objective", "parallel"].concat(HW.map(h => h.id))) $(id).addEventListener("change", () => changed(0));
  for (const h of HW.filter(h => !h.list)) $(h.id).addEventListener("input", () => changed(DEBOUNCE_MS));
  $("upload").addEventListener("change", upload);
  if (options.llm) {
    $("mode").addEventListener("change", () => { showMode(); changed(0); });
    for (const l of LLM) $(l.id).addEventListener(l.list ? "change" : "input", () => { showContext(); changed(l.list ? 0 : DEBOUNCE_MS); });
    $("image").addEventListener("change", () => changed(0));  // Enter or leaving the field: at once
    showContext();
    for (const l of LLM.filter(l => l.list)) choose(l.id, l.def);
  }
  $("pin").addEventListener("click", togglePin);
  $("open-validation").addEventListener("change", openValidation);
  $("compare-base").addEventListener("change", () => { if (current && !current.summary.llm) draw(current, currentUnf); });
}

function resetHardware() {
  const cfg = presetConfig($("config").value);
  for (const h of HW) $(h.id).value = String(h.get(cfg));
}

const llmMode = () => options.llm && $("mode").value === "llm";

/** Shows the controls and views of the mode chosen. */
function showMode() {
  const llm = llmMode();
  $("workload-controls").hidden = llm;
  $("objective-label").hidden = llm;
  $("parallel-label").hidden = llm;  // an LLM run spreads its phases itself (auto on several cores)
  $("pin").hidden = llm;
  $("compare-label").hidden = llm;
  if (options.llm) { $("llm-controls").hidden = !llm; showImage(); }
  // An LLM run takes the policies /api/options lists in llm.fusion (not "as-is", which runs the
  // groups a model file fused: an LLM run plans its phases itself).
  const llmFusion = options.llm ? options.llm.fusion : [];
  for (const o of $("fusion").options) o.disabled = llm && !llmFusion.includes(o.value);
  if (llm && !llmFusion.includes($("fusion").value)) $("fusion").value = DEFAULTS.fusion;
  $("main").hidden = llm;
  if (llmPage) llmPage.main.hidden = !llm;
}

/** Every parameter, as the URL carries it (the LLM's only in that mode: workload URLs stay as they were). */
function params() {
  const p = {config: $("config").value, workload: $("workload").value, fusion: $("fusion").value, objective: $("objective").value, parallel: $("parallel").value};
  for (const h of HW) p[h.id] = $(h.id).value;
  if (llmMode()) {
    p.mode = "llm";
    for (const l of LLM) if (!l.vision || takesImage()) p[l.id] = l.text ? $(l.id).value.trim() : $(l.id).value;
  }
  return p;
}

/** Sets a select to `value` when it offers it; returns whether it did. */
function choose(id, value) {
  const ok = value !== null && [...$(id).options].some(o => o.value === value);
  if (ok) $(id).value = value;
  return ok;
}

function fromUrl() {
  const q = new URLSearchParams(location.search);
  choose("config", q.get("config")) || choose("config", DEFAULTS.config);
  resetHardware();
  choose("fusion", q.get("fusion")) || choose("fusion", DEFAULTS.fusion);
  for (const id of ["objective"].concat(HW.map(h => h.id))) if (q.has(id)) $(id).value = q.get(id);
  choose("parallel", q.get("parallel")) || choose("parallel", "none");
  const w = q.get("workload");
  if (w && w.startsWith("upload:")) addUploadOption(w, q.get("upload_name") || w.slice(7));
  choose("workload", w) || choose("workload", DEFAULTS.workload);
  if (options.llm) {
    choose("mode", q.get("mode"));
    for (const l of LLM) if (q.has(l.id)) l.list ? choose(l.id, q.get(l.id)) : ($(l.id).value = q.get(l.id));
  }
}

/**
 * The roofline's fixed axes must show every preset's roofs and ridge points, with room for the
 * controls to raise the peaks (clock, array size): intensities and performances to span.
 */
function configSpace() {
  const xs = [], ys = [];
  for (const {config: c} of options.presets) {
    const comp = [c.mac_array.peak_ops_per_second, c.vector_unit.peak_ops_per_second].filter(v => v > 0);
    const mem = [c.dram.peak_bandwidth_bytes_per_second, c.sram.bandwidth_bytes_per_second].filter(v => v > 0);
    for (const v of comp) { ys.push(v * SPACE_HEADROOM, v / 1e3); for (const m of mem) xs.push(v / m, SPACE_HEADROOM * v / m); }
  }
  return {xs, ys};
}

/** The body of POST /api/runs for `p`: only the values that differ from the preset go to --set. */
function request(p, fusion) {
  const cfg = presetConfig(p.config), set = {};
  for (const h of HW) {
    const v = p[h.id];
    if (v === "" || String(h.get(cfg)) === v) continue;
    set[h.key] = h.list ? v : h.unit ? v + h.unit : Number.isInteger(Number(v)) ? Number(v) : v;
  }
  const body = {config: p.config, fusion, set};
  if (p.mode === "llm") {
    body.llm = {model: p.model, prompt: Number(p.prompt), generate: Number(p.generate)};
    if (p.batch && Number(p.batch) !== 1) body.llm.batch = Number(p.batch);
    if (p.context && Number(p.context) !== 0) body.llm.context = Number(p.context);
    if (p.prefill_chunk && Number(p.prefill_chunk) !== 0) body.llm.prefill_chunk = Number(p.prefill_chunk);
    for (const k of ["weight_dtype", "act_dtype", "kv_dtype"]) if (p[k]) body.llm[k] = p[k];
    if (p.draft) Object.assign(body.llm, {draft: p.draft, draft_tokens: Number(p.draft_tokens), acceptance: Number(p.acceptance)});
    if (p.image) body.llm.image = p.image;
    return body;
  }
  if (p.parallel && p.parallel !== "none") body.parallel = p.parallel;
  if (p.workload.startsWith("upload:")) body.upload = p.workload.slice(7); else body.workload = p.workload;
  if (fusion === "search") body.objective = p.objective;
  return body;
}

let lastRequested = "";  // the parameters of the latest run started: a change back to them is no change
function changed(delay = 0) {
  closeValidation();  // a control changed: the reader is back at the live run
  showContext();
  // A malformed image is said under its control, and nothing runs until it is WIDTHxHEIGHT.
  if (llmMode() && !showImage()) return clearTimeout(timer);
  if (JSON.stringify(params()) === lastRequested) return clearTimeout(timer);
  changedAt = performance.now();
  $("objective").disabled = $("fusion").value !== "search";
  const q = new URLSearchParams(params());
  if (llmMode()) for (const k of ["workload", "objective", "parallel"]) q.delete(k);
  const up = $("workload").selectedOptions[0];
  if (up && up.value.startsWith("upload:")) q.set("upload_name", up.dataset.name);
  history.replaceState(null, "", "?" + q.toString());
  clearTimeout(timer);
  // A committed change is posted from its own event, before the browser renders a frame (a
  // timer would wait for it: 15 to 30 ms on the development VM).
  if (delay === 0) runAll();
  else timer = setTimeout(runAll, delay);
}

const progress = {};
function showProgress() {
  const parts = Object.values(progress);
  const frac = parts.length ? parts.reduce((s, v) => s + v.fraction, 0) / parts.length : 1;
  $("progress-bar").style.width = (100 * frac).toFixed(1) + "%";
  $("progress").classList.toggle("active", parts.length > 0);
  $("status").textContent = parts.length ? parts.map(v => v.text).join(" · ") : $("status").textContent;
}

/** What the progress line says of a run's state `s`: commands of a workload run, phases of an LLM run. */
function progressText(body, s) {
  if (s.phase !== "simulating") return s.phase;
  return body.llm ? "phase " + s.commands_done + "/" + s.commands_total + " (the prefill, then the decode steps simulated)"
    : s.phase + " " + s.commands_done + "/" + s.commands_total + " commands";
}

/**
 * The server-sent events of a streamed answer (`body`, a fetch's ReadableStream), as {event,
 * data} objects in order, until the stream ends.
 */
async function* serverEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    text += value;
    let end;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) yield {event, data: data.join("\n")};
    }
  }
}

/**
 * Starts one run and resolves with {id, label, summary, roofline} when it is done (an LLM run:
 * {id, label, summary, hardware}, the resolved config whose roofs its phases are drawn on). The
 * POST's answer is the run's events: its state at every change, and when it is done its results
 * (an event `result`, just before the final state), so a run costs the page one request.
 */
async function startRun(body, slot, onState = null, started = null, phases = null) {
  const key = JSON.stringify(body);
  if (cache.has(key)) return cache.get(key);
  const res = await fetch("/api/runs", {method: "POST", headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
    body: JSON.stringify({...body, session: TAB + "/" + slot, sequence: (sequence[slot] = (sequence[slot] || 0) + 1)})});
  if (!res.ok) {
    const j = await res.json().catch(() => ({}));
    const e = new Error(j.error || res.statusText);
    e.cancelled = res.status === 409;  // a newer run of this slot started: this one is not wanted
    throw e;
  }
  progress[slot] = {fraction: 0, text: slot + ": planning"};
  showProgress();
  let id = null, state = null, result = null;
  try {
    for await (const ev of serverEvents(res.body)) {
      if (ev.event === "result") { result = JSON.parse(ev.data); continue; }
      if (ev.event !== "run") continue;
      const s = JSON.parse(ev.data);
      if (id === null && started !== null) mark("posted", started, phases);
      id = s.id;
      progress[slot] = {fraction: s.status === "running" ? s.fraction : 1, text: slot + ": " + progressText(body, s)};
      showProgress();
      if (onState && s.status === "running") onState(s);
      if (s.status !== "running") { state = s; break; }
    }
  } catch (e) {
    // The stream broke: the run's state says how it ended (if the server is still there).
  }
  if (!state) state = id === null ? {status: "failed", message: "lost the server"} :
    await fetch("/api/runs/" + id).then(r => r.json()).catch(() => ({status: "failed", message: "lost the server"}));
  delete progress[slot];
  showProgress();
  if (state.status === "cancelled") { const e = new Error("cancelled"); e.cancelled = true; throw e; }
  if (state.status !== "done") throw new Error(state.message || state.status);
  if (started !== null) mark("run-done", started, phases);
  if (phases) phases.server = 1000 * state.elapsed_s;  // the run on the server, from its start to its end
  // The results came with the events; a broken stream leaves them to the run's files.
  const files = body.llm ? ["summary.json", "hardware.json"] : ["summary.json", "roofline.json"];
  const [summary, second] = result ? [result.summary, result.roofline] :
    await Promise.all(files.map(f => fetch("/api/runs/" + id + "/files/" + f).then(r => r.json())));
  if (started !== null) mark("files", started, phases);
  const done = {id, label: body.fusion === "none" ? "unfused" : body.fusion, summary, [body.llm ? "hardware" : "roofline"]: second};
  cache.set(key, done);
  return done;
}

/**
 * Says at the top of the page whether the results shown are current: while a run is in flight
 * and after one failed, the old results are dimmed and the download link points nowhere.
 */
function setState(state, message = "") {
  document.body.dataset.state = state;
  $("main").classList.toggle("stale", state !== "done");
  if (llmPage) llmPage.main.classList.toggle("stale", state !== "done");
  const banner = $("banner");
  banner.className = "banner " + state;
  const shown = current ? "the results below are from the previous run (" + describe(current) + ")" : "no results yet";
  banner.textContent = state === "running" ? "Running… " + shown + "." : state === "failed" ? "The run failed: " + message + " — " + shown + "." : "";
  const dl = $("download");
  if (state === "done" && current) {
    dl.href = "/api/runs/" + current.id + "/download";
    dl.classList.remove("disabled");
    dl.removeAttribute("aria-disabled");
    dl.textContent = "Download run folder";
  } else {
    dl.removeAttribute("href");
    dl.classList.add("disabled");
    dl.setAttribute("aria-disabled", "true");
    dl.textContent = state === "failed" ? "Download run folder (the run failed)" : "Download run folder (waiting for the run)";
  }
}
const describe = r => r.summary.workload + " on " + r.summary.config_name + ", fusion " + r.summary.fusion +
  (r.summary.llm ? (r.summary.llm.context ? ", context " + r.summary.llm.context : "") + ", prompt " + r.summary.llm.prompt + ", generate " + r.summary.llm.generate +
    (r.summary.llm.vision ? ", image " + r.summary.llm.vision.image_given.join("x") : "") : "");

/**
 * An LLM run: one run (no unfused companion, no timeline), drawn by llm.js. The server streams
 * each phase's figures as it is simulated (the run state's llm_phases): the prefill's point and
 * each decode sample are drawn as they land, the whole run when it is done.
 */
async function runLlm(gen, p, started) {
  const body = request(p, p.fusion);
  let drawn = 0;
  window.npusimLlmEvents = [];
  const cur = await startRun(body, "run", s => {
    const phases = s.llm_phases || [];
    if (gen !== generation || phases.length === drawn) return;
    renderLlmPartial(llmPage, phases, body.llm, s);
    // One state may bring several phases (the server sends the latest state, and a busy page reads
    // it late): each is logged as drawn now.
    const ms = performance.now() - started;
    for (let i = drawn; i < phases.length; ++i) window.npusimLlmEvents.push({what: phases[i].phase, phases: i + 1, ms});
    drawn = phases.length;
    const what = phases[phases.length - 1].phase;
    $("status").textContent = (what === "prefill" ? "prefill drawn" : phases.length - 1 + " decode step" + (phases.length > 2 ? "s" : "") + " drawn") +
      " after " + Math.round(performance.now() - started) + " ms · phase " + s.commands_done + "/" + s.commands_total;
  });
  if (gen !== generation) return;
  current = cur;
  renderLlm(llmPage, cur.summary, cur.hardware);
  window.npusimLlmEvents.push({what: "done", ms: performance.now() - started});
  setState("done");
  document.body.dataset.runId = cur.id;
  document.body.dataset.settled = cur.id;
  const ms = performance.now() - started;
  window.npusimTimings.push(ms);
  const l = cur.summary.llm;
  $("status").textContent = describe(cur) + " · TTFT " + si(l.ttft_seconds, "s") + " · " +
    (l.decode.tokens_per_second ? Math.round(l.decode.tokens_per_second) + " tokens/s" : "no decode") +
    " · views updated " + Math.round(ms) + " ms after the change";
}

/** The run the current one is set against: the unfused companion, or the pinned baseline when chosen. */
const compareBase = () => ($("compare-base") && $("compare-base").value === "baseline" && baseline ? "baseline" : "unfused");

/**
 * Draws the current run against its base; `unf` may still be on its way (null). Resolves when
 * the views below the roofline are drawn too (a frame after it).
 */
function draw(cur, unf) {
  const fresh = r => r && {...r, entity: undefined};  // re-index: views add lookups to the objects they draw
  currentUnf = unf;
  document.body.dataset.compareBase = compareBase();
  if (compareBase() === "baseline" && baseline.summary.workload === cur.summary.workload) {
    // Any run against any run: the pinned one is the base, its points open under its own roofs.
    const b = fresh(baseline);
    return renderPage(page, fresh(cur), b, null, null, b);
  }
  return renderPage(page, fresh(cur), fresh(unf), baseline);
}

async function runAll() {
  const gen = ++generation, p = params(), started = changedAt;
  lastRequested = JSON.stringify(p);
  setState("running");
  try {
    if (p.mode === "llm") return await runLlm(gen, p, started);
    // The run itself first, alone on the server's cores, drawn as soon as it lands; then, once
    // the frame that shows it is painted, the unfused companion (a larger run: every op its own
    // group), drawn beside it when it lands, and then the timeline (its trace is a run of its
    // own on the server): neither takes the machine's cores from that frame.
    const phases = {};
    const cur = await startRun(request(p, p.fusion), "run", null, started, phases);
    if (gen !== generation) return;
    const unfusedBody = p.fusion === "none" ? null : request(p, "none");
    let unf = unfusedBody && cache.get(JSON.stringify(unfusedBody)) || null;
    const companion = !unfusedBody || unf !== null;  // none wanted, or already at hand
    current = cur;
    // Asked for before the draw, so that it is told before the views a frame later are drawn.
    const painted = afterFrame().then(() => {
      window.npusimPaintTimings.push(mark("painted", started, phases));
      window.npusimPhases.push(phases);
    });
    let drawn = draw(cur, unf);
    setState("done");
    document.body.dataset.runId = cur.id;
    const first = mark("drawn", started, phases);
    window.npusimTimings.push(first);
    const status = () => describe(cur) + " · " + si(cur.summary.seconds, "s") + " simulated · drawn " + Math.round(first) + " ms after the change" +
      (p.fusion === "none" ? "" : unf ? " · unfused companion " + Math.round(performance.now() - started) + " ms" : " · unfused companion running…");
    $("status").textContent = status();
    if (!companion) {
      document.body.dataset.partial = cur.id;
      await painted;
      if (gen !== generation) return;
      unf = await startRun(unfusedBody, "unfused");
      if (gen !== generation) return;
      drawn = draw(cur, unf);
      window.npusimCompanionTimings.push(performance.now() - started);
      $("status").textContent = status();
    }
    loadTimeline(cur.id, 0, 0);
    delete document.body.dataset.partial;
    Promise.all([page.rooflineView.done, drawn]).then(() => { if (gen === generation) document.body.dataset.settled = cur.id; });
  } catch (e) {
    if (gen !== generation || e.cancelled) return;
    setState("failed", e.message);
    $("status").textContent = "the run failed";
  }
}

async function loadTimeline(id, begin, end) {
  const q = "bins=400" + (end > 0 ? "&begin_ps=" + begin + "&end_ps=" + end : "");
  const res = await fetch("/api/runs/" + id + "/timeline?" + q);
  if (!res.ok || !current || current.id !== id) return;
  const tl = await res.json();
  if (current.id === id) renderTimeline(page, 0, tl, page.current);
}

function addUploadOption(value, name) {
  if ([...$("workload").options].some(o => o.value === value)) return;
  const o = document.createElement("option");
  o.value = value;
  o.dataset.name = name;
  o.textContent = "upload: " + name;
  $("workload").appendChild(o);
}

async function upload() {
  const file = $("upload").files[0];
  $("upload-error").textContent = "";
  if (!file) return;
  if (file.size > options.limits.max_upload_bytes) {
    $("upload-error").textContent = file.name + ": " + si(file.size, "B") + " is over the upload limit of " + si(options.limits.max_upload_bytes, "B");
    return;
  }
  $("upload-error").textContent = "checking " + file.name + "…";
  const res = await fetch("/api/uploads?name=" + encodeURIComponent(file.name), {method: "POST", body: file});
  const j = await res.json().catch(() => ({error: res.statusText}));
  if (!res.ok) { $("upload-error").textContent = j.error; return; }
  $("upload-error").textContent = "";
  addUploadOption("upload:" + j.upload, j.name);
  $("workload").value = "upload:" + j.upload;
  changed();
}

/** Opens the validation.json the user picked: read here, in the browser; nothing goes to the server. */
async function openValidation() {
  const input = $("open-validation"), file = input.files[0];
  $("validation-error").textContent = "";
  if (!file) return;
  const {data, error} = await readValidationFile(file);
  input.value = "";  // so that picking the same file again opens it again
  if (error) $("validation-error").textContent = error;
  else showValidation(data, file.name);
}

/** The validation view of `v` (from the file `name`) in place of the run's views, with a way back. */
function showValidation(v, name) {
  closeValidation();
  validationMain = document.createElement("main");
  validationMain.id = "validation-main";
  const head = document.createElement("div");
  head.className = "validation-head";
  const back = document.createElement("button");
  back.type = "button";
  back.id = "close-validation";
  back.textContent = "Back to the live run";
  back.addEventListener("click", closeValidation);
  const what = document.createElement("span");
  what.className = "note";
  what.textContent = name + ", opened in this page (read in the browser, not sent to the server)";
  head.append(back, " ", what);
  validationMain.appendChild(head);
  $("main").parentElement.appendChild(validationMain);  // in the document first: the labels are measured as drawn
  renderValidation(validationMain, v);
  $("main").hidden = true;
  if (llmPage) llmPage.main.hidden = true;
  document.body.dataset.view = "validation";
}

function closeValidation() {
  if (!validationMain) return;
  validationMain.remove();
  validationMain = null;
  delete document.body.dataset.view;
  showMode();
}

function togglePin() {
  if (baseline) {
    baseline = null;
    $("pin").textContent = "Pin as baseline";
    $("compare-base").value = "unfused";
  } else if (current) {
    baseline = {...current, label: "baseline", entity: undefined};  // kept whatever changes next (another workload is marked as such)
    $("pin").textContent = "Unpin baseline (" + current.summary.workload + ", " + current.summary.config_name + ", " + current.label + ")";
  }
  $("compare-base").options[1].disabled = !baseline;
  if (current) runAll();
}

async function main() {
  const res = await fetch("/api/options");
  options = await res.json();
  buildControls();
  fromUrl();
  page = buildPage($("main"), {onZoom: (b, e) => current && loadTimeline(current.id, b, e), space: configSpace(), defer: true});
  if (options.llm) {
    const m = document.createElement("main");
    m.id = "llm-main";
    $("main").after(m);
    llmPage = {...buildLlmPage(m), main: m};
  }
  showMode();
  changed();
}
main().catch(e => { $("banner").className = "banner failed"; $("banner").textContent = "cannot reach the npusim server: " + e.message; });
