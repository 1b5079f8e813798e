// The validation view: npusim validate's validation.json (docs/validation.md) drawn as, per
// metric, a log-log scatter of simulated against measured (x measured, y simulated, one decade
// range for both axes, y = x dashed, the band within 25 % shaded, each figure a point named by its
// row), the per-metric error statistics, every figure, and the rows that were skipped or failed
// with their reasons. Shared by report.html (report.js) and the live page (app.js), which opens a
// validation.json the user picks: the file may come from anywhere, so its strings reach the page
// only as text (textContent, d3's .text and .attr), never as HTML.
import {axisBottom, axisLeft, scaleLog, select} from "d3";
import {fixed, int} from "./format.js";
import {LabelPlacer} from "./labels.js";
import {hideTip, moveTip, showTipLines} from "./tooltip.js";

/** The largest validation.json the live page reads (a file of a few thousand rows is well under 1 MiB). */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const BAND = 0.25;  // the shaded band: within 25 % of the measurement, as the plain page draws it
const W = 560, H = 440, M = {l: 78, r: 24, t: 34, b: 56};
const INSIDE = "#2a8f3c", OUTSIDE = "#c0392b";
const QUANTITY = {latency_ms: "latency", ttft_ms: "TTFT", tokens_per_second: "decode", memory_mb: "memory"};

// What validation.json must hold for the view to draw it: field -> type ("?" = may be null or absent).
const ROW = {row: "number", name: "string", kind: "string", status: "string", figures: "array",
  source: "string?", skipped: "string?", error: "string?"};
const FIGURE = {metric: "string", unit: "string", simulated: "number", measured: "number", ratio: "number", error_percent: "number"};
const METRIC = {metric: "string", unit: "string", count: "number", median_error_percent: "number",
  median_abs_error_percent: "number", max_abs_error_percent: "number", max_abs_error_row: "number"};
const STATUSES = ["ok", "skipped", "failed"];

/** Why `o` does not have the fields of `spec`, or "" when it has them. */
function fieldsProblem(o, spec) {
  if (!o || typeof o !== "object" || Array.isArray(o)) return "expected an object";
  for (const [key, type] of Object.entries(spec)) {
    const v = o[key], optional = type.endsWith("?"), t = type.replace("?", "");
    if (optional && (v === null || v === undefined)) continue;
    const ok = t === "array" ? Array.isArray(v) : t === "number" ? typeof v === "number" && isFinite(v) : typeof v === t;
    if (!ok) return "expected `" + key + "` to be " + (t === "array" ? "an array" : "a " + t) + (optional ? " or null" : "");
  }
  return "";
}

/** Why `v` is not validation.json's content (what the view draws), or "" when it is. */
export function validationProblem(v) {
  const top = fieldsProblem(v, {rows: "array", metrics: "array", csv: "string?"});
  if (top) return top;
  for (const [i, r] of v.rows.entries()) {
    const p = fieldsProblem(r, ROW) || (STATUSES.includes(r.status) ? "" : "expected `status` to be ok, skipped or failed");
    if (p) return "rows[" + i + "]: " + p;
    for (const [k, f] of r.figures.entries()) {
      const q = fieldsProblem(f, FIGURE);
      if (q) return "rows[" + i + "].figures[" + k + "]: " + q;
    }
  }
  for (const [i, m] of v.metrics.entries()) {
    const p = fieldsProblem(m, METRIC);
    if (p) return "metrics[" + i + "]: " + p;
  }
  return "";
}

/**
 * Reads `file` (a File the user picked) in the browser: {data} when it is a validation.json,
 * else {error}, a sentence naming the file.
 */
export function readValidationFile(file) {
  if (file.size > MAX_FILE_BYTES)
    return Promise.resolve({error: file.name + " is " + int(file.size) + " bytes: a validation.json of at most " + MAX_FILE_BYTES / 1048576 + " MiB is read"});
  return new Promise(resolve => {
    const reader = new FileReader();
    reader.onerror = () => resolve({error: file.name + " could not be read"});
    reader.onload = () => {
      let data;
      try { data = JSON.parse(reader.result); } catch { return resolve({error: file.name + " is not JSON"}); }
      const problem = validationProblem(data);
      resolve(problem ? {error: file.name + " is not a validation.json of npusim validate: " + problem} : {data});
    };
    reader.readAsText(file);
  });
}

// Numbers as the terminal table writes them (5 significant digits, no trailing zeros; the ratio
// with 3 decimals, the error in % with 1 and its sign), each with its unit; never an exponent.
const sig5 = v => { const t = String(Number(v.toPrecision(5))); return t.includes("e") ? fixed(v, 5) : t; };
const value = (v, unit) => sig5(v) + " " + unit;
const ratioText = v => v.toFixed(3);
const signed = v => (v >= 0 ? "+" : "") + v.toFixed(1) + " %";
const percent = v => v.toFixed(1) + " %";

/** `tag` appended to `parent`, with `text` (as text) and `cls`. */
function add(parent, tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  parent.appendChild(e);
  return e;
}

/** A titled <section> of the view (titles are the view's own words). */
function section(main, id, title) {
  const sec = add(main, "section");
  sec.id = id;
  add(sec, "h2", title);
  return add(sec, "div", null, "body");
}

/** A table: `head` (column names; "l" before a name aligns it left) and `rows` of cells {text, cls, value}. */
function table(parent, cls, head, rows) {
  const t = add(parent, "table", null, cls);
  const hr = add(add(t, "thead"), "tr");
  for (const h of head) add(hr, "th", h.replace(/^l /, ""), h.startsWith("l ") ? "l" : "");
  const body = add(t, "tbody");
  for (const cells of rows) {
    const tr = add(body, "tr");
    for (const c of cells) {
      const td = add(tr, "td", c.text, c.cls);
      if (c.value !== undefined) td.dataset.value = String(c.value);
    }
  }
  return t;
}

/** Every figure with its row: {row, figure}. */
const figuresOf = v => v.rows.flatMap(r => r.figures.map(f => ({row: r, f})));
const rowName = (v, n) => { const r = v.rows.find(x => x.row === n); return r ? "row " + n + " (" + r.name + ")" : "row " + n; };

/** Draws validation.json's content `v` (checked by validationProblem) into `main`. */
export function renderValidation(main, v) {
  summary(section(main, "validation-summary", "Validation: simulated against measured"), v);
  const plots = add(section(main, "validation-scatter", "Simulated against measured, per metric (log-log)"), "div", null, "charts");
  const figures = figuresOf(v);
  const metrics = [...new Set(v.metrics.map(m => m.metric).concat(figures.map(x => x.f.metric)))];
  metrics.forEach((m, i) => scatter(plots, m, figures.filter(x => x.f.metric === m), i));
  if (!metrics.length) add(plots, "p", "No figure was simulated: nothing to plot.", "note");
  statsTable(section(main, "validation-stats", "Per metric: the errors"), v);
  figureTable(section(main, "validation-rows", "Every figure"), figures);
  notSimulated(section(main, "validation-not-simulated", "Rows not simulated: skipped and failed"), v);
}

function summary(el, v) {
  const cards = add(el, "div", null, "cards");
  const card = (k, val, id) => {
    const c = add(cards, "div", null, "card");
    add(c, "div", k, "k");
    const e = add(c, "div", val, "v");
    if (id) e.id = id;
  };
  card("CSV", v.csv || "–", "validation-csv");
  card("rows run", int(v.rows.length) + (typeof v.rows_in_csv === "number" ? " of " + int(v.rows_in_csv) : ""));
  card("figures", int(figuresOf(v).length));
  card("skipped", int(v.rows.filter(r => r.status === "skipped").length), "validation-skipped");
  card("failed", int(v.rows.filter(r => r.status === "failed").length), "validation-failed");
  const p = v.provenance && typeof v.provenance === "object" ? v.provenance : {};
  add(el, "p", "Each row of the CSV simulated as npusim run or npusim llm would run it" +
    (typeof v.config === "string" ? " (--config " + v.config + ")" : "") +
    ", against its measured figure. ratio = simulated / measured; error = (simulated − measured) / measured × 100." +
    (typeof p.version === "string" ? " npusim " + p.version + (typeof p.commit === "string" ? ", commit " + p.commit : "") + "." : ""), "note");
}

/** The axes' range: whole decades around every point, one at least (as the plain page). */
function decadeRange(points) {
  const vals = points.flatMap(p => [p.f.measured, p.f.simulated]);
  const lo = Math.floor(Math.log10(Math.min(...vals))), hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...vals))));
  return [lo, hi];
}

/** A tick's label: plain digits (0.001 .. 100000), never an exponent where the range allows. */
const tickLabel = v => String(Number(v.toPrecision(2)));

/** Ticks of [10^lo, 10^hi]: every decade, and 2 and 5 of each when the axes span two decades or less. */
function ticks(lo, hi) {
  const out = [];
  for (let d = lo; d <= hi; d++)
    for (const k of hi - lo <= 2 ? [1, 2, 5] : [1]) if (d < hi || k === 1) out.push(k * 10 ** d);
  return out;
}

/** The light grid: 1..9 of each decade. */
function gridValues(lo, hi) {
  const out = [];
  for (let d = lo; d < hi; d++) for (let k = 1; k <= 9; k++) out.push(k * 10 ** d);
  return out.concat([10 ** hi]);
}

/** One metric's figures `points` ({row, f}) as a log-log scatter; `i` makes its clip path's id unique. */
function scatter(parent, metric, points, i) {
  const fig = add(parent, "figure", null, "validation-plot");
  const unit = points.length ? points[0].f.unit : "";
  const ok = points.filter(p => p.f.measured > 0 && p.f.simulated > 0);
  const [lo, hi] = ok.length ? decadeRange(ok) : [0, 1];
  const x = scaleLog().domain([10 ** lo, 10 ** hi]).range([M.l, W - M.r]);
  const y = scaleLog().domain([10 ** lo, 10 ** hi]).range([H - M.b, M.t]);
  const svg = select(fig).append("svg").attr("class", "validation-scatter").attr("data-metric", metric)
    .attr("viewBox", "0 0 " + W + " " + H).attr("width", W).attr("height", H);
  svg.append("text").attr("class", "plot-title").attr("x", M.l).attr("y", 20).attr("font-size", 13).attr("font-weight", "bold").text(metric);
  axes(svg, x, y, lo, hi);
  const clip = "validation-plot-" + i;
  svg.append("clipPath").attr("id", clip).append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b);
  const g = svg.append("g").attr("clip-path", "url(#" + clip + ")");
  const [a, b] = [10 ** lo, 10 ** hi];
  g.append("polygon").attr("class", "band").attr("fill", "#4a90d9").attr("fill-opacity", 0.15)
    .attr("points", [[a, a * (1 - BAND)], [b, b * (1 - BAND)], [b, b * (1 + BAND)], [a, a * (1 + BAND)]].map(([u, w]) => x(u) + "," + y(w)).join(" "));
  g.append("line").attr("class", "identity").attr("x1", x(a)).attr("y1", y(a)).attr("x2", x(b)).attr("y2", y(b))
    .attr("stroke", "#333").attr("stroke-dasharray", "4 3");
  const legend = svg.append("text").attr("x", M.l + 6).attr("y", M.t + 14).attr("fill", "#555").attr("font-size", 11)
    .text("dashed: simulated = measured; shaded: within 25 %");
  const quantity = (QUANTITY[metric] || metric) + " (" + unit + ")";
  svg.append("text").attr("class", "axis-name").attr("x", (M.l + W - M.r) / 2).attr("y", H - 12).attr("text-anchor", "middle")
    .attr("font-size", 12).text("measured " + quantity);
  svg.append("text").attr("class", "axis-name").attr("transform", "translate(18," + (M.t + H - M.b) / 2 + ") rotate(-90)")
    .attr("text-anchor", "middle").attr("font-size", 12).text("simulated " + quantity);
  drawPoints(svg, ok, x, y, labelPlaces(svg, ok, x, y, legend.node()));
  if (ok.length < points.length)
    add(fig, "figcaption", points.length - ok.length + " figure(s) not above zero: in the table, not on the log axes.", "note");
}

function axes(svg, x, y, lo, hi) {
  const grid = gridValues(lo, hi);
  const gg = svg.append("g").attr("class", "grid");
  for (const v of grid) {
    const major = Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9;
    const stroke = major ? "#ccc" : "#eee";
    gg.append("line").attr("x1", x(v)).attr("x2", x(v)).attr("y1", M.t).attr("y2", H - M.b).attr("stroke", stroke);
    gg.append("line").attr("y1", y(v)).attr("y2", y(v)).attr("x1", M.l).attr("x2", W - M.r).attr("stroke", stroke);
  }
  const t = ticks(lo, hi);
  svg.append("g").attr("class", "axis x").attr("transform", "translate(0," + (H - M.b) + ")")
    .call(axisBottom(x).tickValues(t).tickFormat(tickLabel));
  svg.append("g").attr("class", "axis y").attr("transform", "translate(" + M.l + ",0)")
    .call(axisLeft(y).tickValues(t).tickFormat(tickLabel));
}

/** What the hover box says about a figure. */
function tipLines({row, f}) {
  const lines = ["row " + row.row + ": " + row.name + " (" + row.kind + ")", "metric: " + f.metric,
    "simulated: " + value(f.simulated, f.unit), "measured: " + value(f.measured, f.unit),
    "ratio (simulated / measured): " + ratioText(f.ratio), "error: " + signed(f.error_percent)];
  if (typeof row.source === "string") lines.push("source: " + row.source);
  return lines;
}

/**
 * Where each point's name goes: beside it, at the first place that overlaps no other name, point
 * or the legend; where there is none, at the first place all the same (every point is named).
 */
function labelPlaces(svg, points, x, y, legend) {
  const measurer = svg.append("text").attr("font-size", 11).attr("visibility", "hidden");
  const placer = new LabelPlacer(text => measurer.text(text).node().getComputedTextLength(),
    {x0: M.l + 2, y0: M.t + 2, x1: W - M.r - 2, y1: H - M.b - 2});
  placer.box(M.l + 6, M.t + 2, legend.getComputedTextLength(), 16);
  for (const p of points) placer.box(x(p.f.measured) - 5, y(p.f.simulated) - 5, 10, 10);
  const places = points.map(p => {
    const px = x(p.f.measured), py = y(p.f.simulated);
    const cands = [{x: px + 7, y: py - 6, anchor: "start"}, {x: px + 7, y: py + 14, anchor: "start"},
      {x: px - 7, y: py - 6, anchor: "end"}, {x: px - 7, y: py + 14, anchor: "end"}];
    return placer.place(p.row.name, cands) || cands[0];
  });
  measurer.remove();
  return places;
}

function drawPoints(svg, points, x, y, places) {
  const g = svg.append("g").attr("class", "points").selectAll("g").data(points).join("g").attr("class", "point")
    .attr("data-row", p => p.row.row).attr("data-ratio", p => p.f.ratio)
    .attr("data-simulated", p => p.f.simulated).attr("data-measured", p => p.f.measured);
  g.append("circle").attr("cx", p => x(p.f.measured)).attr("cy", p => y(p.f.simulated)).attr("r", 4.5)
    .attr("fill", p => (Math.abs(p.f.error_percent) <= BAND * 100 ? INSIDE : OUTSIDE)).attr("stroke", "#fff");
  g.append("text").attr("class", "label").attr("x", (p, i) => places[i].x).attr("y", (p, i) => places[i].y)
    .attr("text-anchor", (p, i) => places[i].anchor).attr("font-size", 11).text(p => p.row.name);
  g.on("mouseenter", (ev, p) => showTipLines(ev, tipLines(p))).on("mousemove", moveTip).on("mouseleave", hideTip);
}

function statsTable(el, v) {
  if (!v.metrics.length) { add(el, "p", "No metric has a simulated figure.", "note"); return; }
  table(el, "validation-stats", ["l metric", "figures", "median error", "median |error|", "max |error|", "l at"], v.metrics.map(m => [
    {text: m.metric + " (" + m.unit + ")", cls: "l"}, {text: int(m.count), value: m.count},
    {text: signed(m.median_error_percent), value: m.median_error_percent},
    {text: percent(m.median_abs_error_percent), value: m.median_abs_error_percent},
    {text: percent(m.max_abs_error_percent), value: m.max_abs_error_percent},
    {text: rowName(v, m.max_abs_error_row), cls: "l", value: m.max_abs_error_row}]));
  add(el, "p", "error = (simulated − measured) / measured × 100, in %; the median |error| and the largest say how far the figures sit from their measurements either way.", "note");
}

function figureTable(el, figures) {
  if (!figures.length) { add(el, "p", "No figure was simulated.", "note"); return; }
  table(el, "validation-figures", ["row", "l name", "l kind", "l metric", "simulated", "measured", "ratio", "error", "l source"],
    figures.map(({row, f}) => [{text: row.row}, {text: row.name, cls: "l"}, {text: row.kind, cls: "l"}, {text: f.metric, cls: "l"},
      {text: value(f.simulated, f.unit), value: f.simulated}, {text: value(f.measured, f.unit), value: f.measured},
      {text: ratioText(f.ratio), cls: "ratio", value: f.ratio},
      {text: signed(f.error_percent), cls: Math.abs(f.error_percent) > BAND * 100 ? "out" : "", value: f.error_percent},
      {text: row.source || "", cls: "l"}]));
}

function notSimulated(el, v) {
  const rows = v.rows.filter(r => r.status !== "ok");
  if (!rows.length) { add(el, "p", "Every row selected was simulated.", "note"); return; }
  table(el, "validation-not-simulated", ["row", "l name", "l kind", "l status", "l reason", "l source"],
    rows.map(r => [{text: r.row}, {text: r.name, cls: "l"}, {text: r.kind, cls: "l"}, {text: r.status, cls: "l " + r.status},
      {text: (r.status === "skipped" ? r.skipped : r.error) || "", cls: "l reason"}, {text: r.source || "", cls: "l"}]));
}
