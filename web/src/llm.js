// The views of a language model's run (`npusim llm`'s summary.json, its `llm` block), shared by
// report.html (report.js) and the live page's LLM mode (app.js): the headline figures (TTFT,
// tokens/s, J/token), the decode latency of every generated token against its context (simulated
// steps filled, interpolated ones open), and the two phases on the config's roofline.
import {axisBottom, axisLeft, line, scaleLinear, scaleLog, select} from "d3";
import {esc, fixed, int, legend, pct, si, stacked} from "./format.js";
import {decades} from "./roofline.js";
import {section} from "./page.js";

const W = 900, H = 380, M = {l: 92, r: 24, t: 14, b: 50};
const SIMULATED = "#1c7ed6", INTERPOLATED = "#868e96", PHASE = {vision: "#2f9e44", prefill: "#1f77b4", decode: "#ff7f0e"};

/** The LLM sections in `main`. */
export function buildLlmPage(main) {
  return {
    summary: section(main, "llm-summary", "Language model: prefill and decode"),
    parts: section(main, "llm-parts", "Where the time and the bytes go: attention, MLP, head"),
    latency: section(main, "llm-latency", "Decode latency against context"),
    roofline: section(main, "llm-roofline", "Each phase on the roofline (DRAM intensity)"),
  };
}

/**
 * A phase's point on the roofline (docs/outputs.md "report.html of npusim llm"): ops = 2 x MACs,
 * intensity = ops per DRAM byte, performance = ops / seconds. The decode point is all decode
 * steps together (their MACs, DRAM bytes and seconds summed).
 */
export function phasePoints(l) {
  const pts = [];
  const add = (phase, label, macs, bytes, seconds) => {
    if (!(macs > 0) || !(bytes > 0) || !(seconds > 0)) return;
    pts.push({phase, label, ops: 2 * macs, bytes, seconds, intensity: 2 * macs / bytes, ops_per_second: 2 * macs / seconds});
  };
  if (l.vision) add("vision", "vision encoder (" + int(l.vision.patches) + " patches)", l.vision.macs, l.vision.dram_bytes, l.vision.seconds);
  add("prefill", "prefill (" + int(l.prefill.tokens) + " tokens)", l.prefill.macs, l.prefill.dram_bytes, l.prefill.seconds);
  const steps = l.decode.steps || [];
  add("decode", "decode (" + int(steps.length) + " steps)", steps.reduce((s, x) => s + x.macs, 0),
    steps.reduce((s, x) => s + x.dram_bytes, 0), l.decode.seconds);
  return pts;
}

/** The roofs the phases are drawn on: the MAC array's peak and DRAM's peak bandwidth of the resolved config. */
export function llmRoofs(hw) {
  return {compute: hw.mac_array.peak_ops_per_second, dram: hw.dram.peak_bandwidth_bytes_per_second};
}

function card(k, v, sub, id, value) {
  const val = id ? '<span id="' + id + '" data-value="' + value + '">' + v + "</span>" : v;
  return '<div class="card"><div class="k">' + esc(k) + '</div><div class="v">' + val + '</div><div class="k">' + sub + "</div></div>";
}

/** Bytes the DRAM device holds, as HardwareConfig's DramConfig::capacity_bytes computes them from the resolved config. */
export function dramCapacity(hw) {
  const d = hw && hw.dram;
  if (!d) return null;
  return d.channels * d.ranks * d.bank_groups * d.banks_per_group * d.rows * d.columns * d.bus_width_bits / 8;
}

function memoryCard(l, hw) {
  const m = l.memory_bytes;
  if (!m) return "";
  const cap = dramCapacity(hw);
  const sub = "weights " + si(m.weights, "B") + " + KV " + si(m.kv_cache, "B") +
    (m.draft ? " + draft " + si(m.draft, "B") : "") + " + activations " + si(m.activations_peak, "B") +
    (cap ? " · " + pct(m.total / cap) + " of " + si(cap, "B") + " DRAM" : "");
  return card("memory footprint", si(m.total, "B"), sub, "memory-footprint", cap ? m.total / cap : "");
}

/** Speculative decoding beside plain decode (llm.speculative, docs/llm.md): tokens/s and the speed-up. */
function speculativeCard(l) {
  const sp = l.speculative;
  if (!sp) return "";
  const tps = sp.tokens_per_second;
  const sub = "draft " + esc(sp.draft_model) + ": " + sp.draft_tokens + " tokens a round at acceptance " + fixed(sp.acceptance, 2) +
    ", " + fixed(sp.tokens_per_round) + " kept" + (typeof sp.speedup === "number" ? " · " + fixed(sp.speedup) + "x plain decode" : "");
  return card("speculative decode", typeof tps === "number" ? fixed(tps) + " tokens/s" : "–", sub, "speculative-tokens-per-second",
    typeof tps === "number" ? tps : "");
}

/**
 * The vision encoder of a vision-language model's run (llm.vision, docs/llm.md "Vision-language
 * models"): its time, the image's tokens and patches (with anyres tiling, the images they are cut
 * into: the base image and the crops), its MACs and DRAM bytes.
 */
function visionCard(l) {
  const v = l.vision;
  if (!v) return "";
  const size = a => int(a[0]) + " × " + int(a[1]) + " px";
  const resized = v.image[0] !== v.image_given[0] || v.image[1] !== v.image_given[1];
  const sub = "image " + size(v.image_given) + (resized ? " (resized to " + size(v.image) + ")" : "") + ": " +
    '<span id="vision-tokens" data-value="' + v.tokens + '">' + int(v.tokens) + " image tokens</span> (" + int(v.patches) + " patches" +
    (v.tiling ? " of " + int(v.images) + " images: the base image and " + int(v.tiling.crop_grid[0]) + " × " + int(v.tiling.crop_grid[1]) + " crops" : "") + ") · " +
    '<span id="vision-macs" data-value="' + v.macs + '">' + si(v.macs, "MACs") + "</span> · " + si(v.dram_bytes, "B") + " DRAM";
  return card("vision encoder", si(v.seconds, "s"), sub, "vision-seconds", v.seconds);
}

/**
 * The weights in DRAM (memory_bytes.weights): the language model's, and with an image the vision
 * tower's beside them, so that the card and the footprint's "weights" are one figure.
 */
function weightsCard(l) {
  const w = l.widths, v = l.vision;
  const widths = esc(w.weights) + (w.head_and_embedding !== w.weights ? ", head " + esc(w.head_and_embedding) : "");
  if (!v) return card("weights", si(l.weight_bytes, "B"), si(l.params, "params") + " · " + widths, "weight-bytes", l.weight_bytes);
  const total = l.weight_bytes + v.weight_bytes;
  const sub = "language model " + si(l.weight_bytes, "B") + " (" + si(l.params, "params") + ") + vision tower " +
    si(v.weight_bytes, "B") + " (" + si(v.parameters, "params") + ") · " + widths;
  return card("weights", si(total, "B"), sub, "weight-bytes", total);
}

/** What the time to first token is made of: the prefill's tokens, and with an image the encoder before it. */
function ttftSub(l) {
  const pre = "the prefill of " + int(l.prefill.tokens) + " tokens";
  const v = l.vision;
  if (!v) return pre;
  return '<span id="ttft-split" data-encoder="' + v.seconds + '" data-prefill="' + l.prefill.seconds + '">encoder ' + si(v.seconds, "s") +
    " + prefill " + si(l.prefill.seconds, "s") + "</span> (" + int(l.prompt) + " text + " + int(v.tokens) + " image tokens)";
}

function headline(el, sm, hw) {
  const l = sm.llm, d = l.decode, w = l.widths;
  const energy = d.energy_per_token_j !== null && d.energy_per_token_j !== undefined;
  el.innerHTML = '<div class="cards">' +
    card("time to first token", si(l.ttft_seconds, "s"), ttftSub(l), "ttft", l.ttft_seconds) +
    visionCard(l) +
    card("decode", d.tokens_per_second === null ? "–" : fixed(d.tokens_per_second) + " tokens/s",
      int(d.tokens) + " tokens in " + si(d.seconds, "s"), "tokens-per-second", d.tokens_per_second) +
    speculativeCard(l) +
    card("energy per token", energy ? si(d.energy_per_token_j, "J") : "–", energy ? "decode, per generated token" : "no energy model", "j-per-token", energy ? d.energy_per_token_j : "") +
    card("total", si(l.total_seconds, "s"), l.vision ? "encoder + prefill + decode" : "prefill + decode") +
    weightsCard(l) +
    card("KV cache", si(l.kv_cache_bytes, "B"), "at context " + int((l.context || 0) + l.prompt + (l.vision ? l.vision.tokens : 0) + l.generate) +
      (l.vision ? " (" + int(l.vision.tokens) + " of them the image's)" : "") + " · " + esc(w.kv_cache)) +
    memoryCard(l, hw) +
    "</div>" +
    '<p class="note">' + esc(l.model) + " (" + esc(l.model_type) + ") on " + esc(sm.config_name) + ", fusion " + esc(sm.fusion) +
    ": batch " + int(l.batch) + ", prompt " + int(l.prompt) + (l.vision ? " text tokens and an image of " + int(l.vision.image_given[0]) + " × " + int(l.vision.image_given[1]) + " px" : "") +
    ", generate " + int(l.generate) + "; activations " + esc(w.activations) +
    "; KV cache " + esc(w.kv_cache) + " in " + esc(l.kv_cache_home || "dram") + ". " + int(d.simulated_steps) +
    " of at most " + int(d.sampling ? d.sampling.max_samples : 5) + " decode steps simulated (the first, the last, then midpoints by bisection until the latency is a line), the others interpolated linearly in the context (docs/llm.md).</p>";
}

/** Decode step latency (s) against context (tokens): one marker per generated token. */
function latencyPlot(el, l) {
  const steps = l.decode.steps || [];
  el.innerHTML = "";
  if (!steps.length) { el.innerHTML = '<p class="note">No decode steps (generate 0).</p>'; return; }
  const cx = steps.map(s => s.context), sec = steps.map(s => s.seconds);
  const lo = Math.min(...cx), hi = Math.max(...cx);
  const x = scaleLinear().domain(lo === hi ? [lo - 1, hi + 1] : [lo, hi]).range([M.l, W - M.r]).nice();
  const y = scaleLinear().domain([0, Math.max(...sec) * 1.08]).range([H - M.b, M.t]).nice();
  const svg = select(el).append("svg").attr("class", "llm-latency").attr("viewBox", "0 0 " + W + " " + H).attr("width", W).attr("height", H);
  svg.append("g").attr("class", "axis x").attr("transform", "translate(0," + (H - M.b) + ")")
    .call(axisBottom(x).ticks(8).tickFormat(v => int(v)));
  svg.append("g").attr("class", "axis y").attr("transform", "translate(" + M.l + ",0)")
    .call(axisLeft(y).ticks(6).tickFormat(v => si(v, "s")));
  svg.append("text").attr("x", (M.l + W - M.r) / 2).attr("y", H - 10).attr("text-anchor", "middle").attr("font-size", 12)
    .text("context (tokens: the prompt and the tokens generated so far)");
  svg.append("text").attr("transform", "translate(16," + ((M.t + H - M.b) / 2) + ") rotate(-90)").attr("text-anchor", "middle").attr("font-size", 12)
    .text("decode step latency");
  svg.append("path").attr("fill", "none").attr("stroke", "#adb5bd").attr("stroke-width", 1)
    .attr("d", line().x(s => x(s.context)).y(s => y(s.seconds))(steps));
  svg.append("g").attr("class", "steps").selectAll("circle").data(steps).join("circle")
    .attr("class", s => "step " + (s.simulated ? "simulated" : "interpolated"))
    .attr("cx", s => x(s.context)).attr("cy", s => y(s.seconds)).attr("r", s => (s.simulated ? 4.5 : 2.5))
    .attr("fill", s => (s.simulated ? SIMULATED : "#fff")).attr("stroke", s => (s.simulated ? SIMULATED : INTERPOLATED))
    .attr("data-context", s => s.context).attr("data-seconds", s => s.seconds)
    .append("title").text(s => "context " + int(s.context) + ": " + si(s.seconds, "s") + ", " + si(s.dram_bytes, "B") + " DRAM, " +
      si(s.macs, "MACs") + (s.simulated ? " (simulated)" : " (interpolated)"));
  el.insertAdjacentHTML("beforeend", legend([["simulated step", SIMULATED], ["interpolated step", INTERPOLATED]]));
}

/** The prefill and decode points on the MAC array and DRAM roofs (log-log). */
function rooflinePlot(el, l, hw, pts = phasePoints(l)) {
  el.innerHTML = "";
  const roofs = llmRoofs(hw), ridge = roofs.compute / roofs.dram;
  const xr = decades([ridge, ...pts.map(p => p.intensity)], 4);
  const yr = decades([roofs.compute, ...pts.map(p => p.ops_per_second), xr[0] * roofs.dram], 2);
  const x = scaleLog().domain(xr).range([M.l, W - M.r]), y = scaleLog().domain(yr).range([H - M.b, M.t]);
  const svg = select(el).append("svg").attr("class", "llm-roofline").attr("viewBox", "0 0 " + W + " " + H).attr("width", W).attr("height", H)
    .attr("data-x-domain", xr.join(",")).attr("data-y-domain", yr.join(","))
    .attr("data-x-range", x.range().join(",")).attr("data-y-range", y.range().join(","));
  const decadeTicks = r => { const t = []; for (let v = r[0]; v <= r[1] * 1.0001; v *= 10) t.push(v); return t; };
  svg.append("g").attr("class", "axis x").attr("transform", "translate(0," + (H - M.b) + ")")
    .call(axisBottom(x).tickValues(decadeTicks(xr)).tickFormat(v => (v < 1 ? fixed(v, 1) : si(v, "", 1).trim())));
  svg.append("g").attr("class", "axis y").attr("transform", "translate(" + M.l + ",0)")
    .call(axisLeft(y).tickValues(decadeTicks(yr)).tickFormat(v => si(v, "ops/s", 1)));
  svg.append("text").attr("x", (M.l + W - M.r) / 2).attr("y", H - 10).attr("text-anchor", "middle").attr("font-size", 12)
    .text("operational intensity (ops per DRAM byte; ops = 2 × MACs)");
  svg.append("text").attr("transform", "translate(14," + ((M.t + H - M.b) / 2) + ") rotate(-90)").attr("text-anchor", "middle").attr("font-size", 12)
    .text("achieved (ops/s)");
  const x0 = Math.max(xr[0], yr[0] / roofs.dram);
  const roof = [[x0, x0 * roofs.dram], [ridge, roofs.compute], [xr[1], roofs.compute]];
  svg.append("path").attr("class", "roof").attr("fill", "none").attr("stroke", "#343a40").attr("stroke-width", 2)
    .attr("d", line().x(p => x(p[0])).y(p => y(p[1]))(roof));
  svg.append("text").attr("x", x(xr[1]) - 4).attr("y", y(roofs.compute) - 6).attr("text-anchor", "end").attr("font-size", 11)
    .text("MAC array " + si(roofs.compute, "ops/s"));
  svg.append("text").attr("x", x(x0) + 6).attr("y", y(x0 * roofs.dram) - 8).attr("font-size", 11)
    .text("DRAM " + si(roofs.dram, "B/s") + " (ridge " + fixed(ridge) + " ops/B)");
  const g = svg.append("g").attr("class", "phases");
  for (const p of pts) {
    g.append("circle").attr("class", "phase " + p.phase + (p.sample ? " sample" : "")).attr("cx", x(p.intensity)).attr("cy", y(p.ops_per_second)).attr("r", p.sample ? 5 : 7)
      .attr("fill", PHASE[p.phase]).attr("stroke", "#000").attr("stroke-width", 0.8)
      .attr("data-phase", p.phase).attr("data-intensity", p.intensity).attr("data-ops-per-second", p.ops_per_second)
      .append("title").text(p.label + ": " + fixed(p.intensity) + " ops/B, " + si(p.ops_per_second, "ops/s"));
    if (!p.sample || p.last) g.append("text").attr("x", x(p.intensity) + 10).attr("y", y(p.ops_per_second) + 4).attr("font-size", 12).text(p.label);
  }
  const words = pts.map(p => {
    const roof = Math.min(roofs.compute, p.intensity * roofs.dram);
    return "<b>" + esc(p.label) + "</b>: " + fixed(p.intensity) + " ops/B, " + si(p.ops_per_second, "ops/s") + " = " +
      fixed(100 * p.ops_per_second / roof) + " % of its roof (" + (p.intensity < ridge ? "DRAM" : "MAC array") + ")";
  });
  el.insertAdjacentHTML("beforeend", '<p class="note">' + words.join("<br>") + "</p>");
}

const PARTS = [["attention", "attention", "#1c7ed6"], ["mlp", "MLP", "#f08c00"], ["head", "LM head", "#7048e8"], ["other", "norms, residuals, embedding", "#adb5bd"]];

/** A phase's split by part (summary.json llm `parts`, docs/llm.md) as bars of time, MACs and DRAM bytes. */
function partsTable(title, parts, id) {
  const row = (k, unit) => {
    const total = PARTS.reduce((a, [key]) => a + (parts[key] ? parts[key][k] : 0), 0);
    return '<tr><td class="l">' + esc(unit[0]) + '</td><td class="l">' + stacked(PARTS.map(([key, label, c]) => [parts[key] ? parts[key][k] : 0, label, c]), total) + "</td>" +
      PARTS.map(([key]) => "<td>" + si(parts[key] ? parts[key][k] : 0, unit[1]) + " (" + pct(total > 0 && parts[key] ? parts[key][k] / total : 0, 0) + ")</td>").join("") + "</tr>";
  };
  return "<h3>" + esc(title) + '</h3><table class="llm-parts" id="' + id + '"><tr><th class="l"></th><th class="l">share</th>' + PARTS.map(([, label]) => "<th>" + esc(label) + "</th>").join("") + "</tr>" +
    row("seconds", ["time", "s"]) + row("macs", ["MACs", "MACs"]) + row("dram_bytes", ["DRAM bytes", "B"]) + "</table>";
}

function partsPanel(el, l) {
  const pre = l.prefill.parts, last = l.decode.last_step;
  if (!pre && !last) { el.innerHTML = '<p class="note">This summary has no split by part (written by an older npusim).</p>'; return; }
  // Why each phase sits where it does on its roof: summary.json's bound in words, per phase.
  const why = (b, id) => (b ? '<p class="bound-why" id="' + id + '">' + esc(b) + "</p>" : "");
  let html = pre ? partsTable("prefill of " + int(l.prefill.tokens) + " tokens", pre, "parts-prefill") + why(l.prefill.bound, "bound-prefill") : "";
  if (last) {
    html += partsTable("last decode step (context " + int(last.context) + ")", last.parts || {}, "parts-decode") + why(last.bound, "bound-decode");
    const kvShare = last.dram_bytes > 0 ? last.kv_cache_read_bytes / last.dram_bytes : 0;
    html += '<h3>its DRAM bytes: KV cache against the rest</h3>' +
      stacked([[last.kv_cache_read_bytes, "KV cache read", "#e8590c"], [Math.max(0, last.other_bytes), "weights, activations, new K/V", "#4c6ef5"]], last.dram_bytes, "wide") +
      legend([["KV cache read " + si(last.kv_cache_read_bytes, "B") + " (" + pct(kvShare) + ")", "#e8590c"],
        ["weights, activations and the new token's K/V " + si(last.other_bytes, "B") + " (" + pct(1 - kvShare) + ")", "#4c6ef5"]]) +
      '<span id="kv-share" data-value="' + kvShare + '" hidden></span>';
  }
  el.innerHTML = html + '<p class="note">Parts by op name: attention (q, k, v, o projections, scores, softmax, context), MLP, the LM head, and the rest (norms, residual adds, the embedding). ' +
    "Time: the ops' time shares of the phase (they add up to it). The KV cache read is the whole cache at the step's context, read once (docs/llm.md); 0 when the cache lives in SRAM.</p>";
}

/** Draws summary.json `sm` (with its `llm` block) on the roofs of `hw` (the resolved config). */
export function renderLlm(p, sm, hw) {
  headline(p.summary, sm, hw);
  if (p.parts) partsPanel(p.parts, sm.llm);
  latencyPlot(p.latency, sm.llm);
  rooflinePlot(p.roofline, sm.llm, hw);
}

/**
 * Draws an LLM run while it runs, from the phases the server streams (docs/serve.md, run state
 * `llm_phases`): the prefill's point and time to first token as soon as the prefill is simulated,
 * each decode sample on the latency plot and the roofline as it lands.
 */
export function renderLlmPartial(p, phases, req, state) {
  const pre = phases.find(f => f.phase === "prefill");
  const dec = phases.filter(f => f.phase === "decode").sort((a, b) => a.context - b.context);
  if (!pre) return;
  p.summary.innerHTML = '<div class="cards">' +
    // With an image the time to first token is the encoder's and the prefill's: it follows with the run.
    (req && req.image ? card("prefill", si(pre.seconds, "s"), "of " + int(pre.tokens) + " text and image tokens; the vision encoder's time and the time to first token follow", "ttft-partial", pre.seconds)
      : card("time to first token", si(pre.seconds, "s"), "the prefill of " + int(pre.tokens) + " tokens", "ttft-partial", pre.seconds)) +
    card("decode", dec.length ? dec.length + " simulated" : "simulating…", "phase " + state.commands_done + " of at most " + state.commands_total + " (prefill + decode samples)") +
    '</div><p class="note" id="llm-partial">Running: the prefill is simulated; ' + dec.length + " decode step" + (dec.length === 1 ? "" : "s") +
    " so far. Tokens/s, energy and the interpolated steps follow when the run ends.</p>";
  if (p.parts) p.parts.innerHTML = '<p class="note">The split by part follows when the run ends.</p>';
  const steps = dec.map(f => ({context: f.context, seconds: f.seconds, dram_bytes: f.dram_bytes, macs: f.macs, simulated: true}));
  if (steps.length) latencyPlot(p.latency, {decode: {steps}});
  else p.latency.innerHTML = '<p class="note">Decode steps: simulating the first…</p>';
  const pts = [];
  const add = (phase, label, f, extra = {}) => {
    if (f.macs > 0 && f.dram_bytes > 0 && f.seconds > 0)
      pts.push({phase, label, intensity: 2 * f.macs / f.dram_bytes, ops_per_second: 2 * f.macs / f.seconds, ...extra});
  };
  add("prefill", "prefill (" + int(pre.tokens) + " tokens)", pre);
  dec.forEach((f, i) => add("decode", "decode step at context " + int(f.context), f, {sample: true, last: i === dec.length - 1}));
  if (pre.roofs) rooflinePlot(p.roofline, null, pre.roofs, pts);
}
