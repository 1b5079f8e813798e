#include "traces/report_page.h"

namespace npusim::traces::report_page {

const char* const kHead = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="npusim">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0;color:#1f2328;background:#f5f6f8}
header{background:#1f2430;color:#fff;padding:14px 24px}
header h1{font-size:20px;margin:0 0 2px;font-weight:600}
header .sub{color:#b8c0cc;font-size:13px}
main{padding:16px 24px;max-width:1340px}
section{background:#fff;border:1px solid #dfe3e8;border-radius:6px;padding:14px 18px;margin:0 0 16px;overflow-x:auto}
h2{font-size:16px;margin:0 0 10px}
h3{font-size:14px;margin:12px 0 6px;color:#444}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #e3e6ea;border-radius:6px;padding:8px 12px;min-width:140px;background:#fbfcfd}
.card .v{font-size:19px;font-weight:600;white-space:nowrap}
.card .k{color:#5a6270;font-size:12px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #eceef1;text-align:right;white-space:nowrap}
th{background:#f7f8fa;color:#3d4450;font-weight:600}
td.l,th.l{text-align:left}
td.clip{max-width:240px;overflow:hidden;text-overflow:ellipsis}
tr:hover td{background:#f3f7ff}
.bar{display:flex;height:14px;border-radius:3px;overflow:hidden;background:#edf0f3;width:260px}
.bar.wide{width:640px;height:20px}
.bar span{display:block;height:100%}
.share{display:inline-block;height:10px;background:#4c6ef5;border-radius:2px;vertical-align:middle;margin-right:6px}
.legend{margin:6px 0 2px}
.legend span{display:inline-block;margin-right:14px;font-size:12px;color:#3d4450}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #8a94a6;border-radius:5px;padding:7px 10px;font-size:12px;box-shadow:0 3px 10px rgba(0,0,0,.18);display:none;max-width:460px;z-index:10}
#tip b{font-size:13px}
#tip .row{margin-top:2px}
#tip .dim{color:#5a6270}
.badge{display:inline-block;padding:0 7px;border-radius:9px;color:#fff;font-size:11px;line-height:17px}
.controls{font-size:12px;margin:0 0 6px;color:#3d4450}
.controls label{margin-right:12px}
.note{color:#5a6270;font-size:12px;margin:6px 0 0}
.warn{color:#b42318;font-weight:600}
svg text{font-family:inherit}
.plot .pt{cursor:pointer}
.plot .pt:hover{stroke-width:3}
.hide-op .scope-op,.hide-group .scope-group,.hide-network .scope-network,.hide-sram .level-sram,.hide-derated .derated{display:none}
.grid2{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
</style>
<title>)HTML";

const char* const kData = R"HTML(</title></head><body>
<header><h1 id="title"></h1><div class="sub" id="sub"></div></header>
<main id="main"></main><div id="tip"></div>
<script>const DATA = )HTML";

const char* const kTail = R"HTML(;</script>
<script>
(function () {
"use strict";
const NS = "http://www.w3.org/2000/svg";
const runs = DATA.runs;
const compare = runs.length > 1;
const BOUND = {compute: "#1f77b4", memory: "#ff7f0e", latency: "#9467bd", none: "#98a2b3"};
const ROOF = ["#555555", "#2ca02c"];
const STALLS = [["compute_s", "work at peak", "#2f9e44"], ["fill_drain_s", "fill/drain", "#74c0fc"],
  ["sram_stall_s", "SRAM stall", "#fcc419"], ["sram_bank_conflict_s", "SRAM bank conflict", "#e67700"],
  ["dma_wait_s", "DMA wait", "#ff8787"],
  ["dependency_s", "dependency", "#b197fc"], ["queueing_s", "queueing", "#adb5bd"]];
const ENERGY = [["mac_j", "MAC", "#1c7ed6"], ["vector_j", "vector", "#74c0fc"], ["sram_read_j", "SRAM read", "#ffa94d"],
  ["sram_write_j", "SRAM write", "#ffd8a8"], ["dram_j", "DRAM", "#e8590c"],
  ["dram_background_j", "DRAM background", "#868e96"], ["static_j", "static", "#ced4da"]];

// ---- formatting ---------------------------------------------------------------------------
function si(v, unit, digits) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  digits = digits || 3;
  if (v === 0) return "0 " + unit;
  const up = ["", "k", "M", "G", "T", "P", "E"], down = ["", "m", "µ", "n", "p", "f"];
  let a = Math.abs(v), i = 0;
  if (a >= 1) { while (a >= 1000 && i < 6) { v /= 1000; a /= 1000; i++; } return v.toPrecision(digits) + " " + up[i] + unit; }
  while (a < 1 && i < 5) { v *= 1000; a *= 1000; i++; }
  return v.toPrecision(digits) + " " + down[i] + unit;
}
function pct(v, d) { return v === null || v === undefined || !isFinite(v) ? "–" : (100 * v).toFixed(d === undefined ? 1 : d) + " %"; }
function int(v) { return v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"); }
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function badge(bound) { return '<span class="badge" style="background:' + (BOUND[bound] || BOUND.none) + '">' + esc(bound) + "</span>"; }
function h(tag, attrs, html) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html;
  return e;
}
function s(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function section(title) {
  const sec = h("section");
  sec.appendChild(h("h2", {}, esc(title)));
  document.getElementById("main").appendChild(sec);
  return sec;
}
function stacked(parts, total, cls) {
  let html = '<div class="bar ' + (cls || "") + '">';
  for (const [v, label, colour] of parts) {
    if (!(v > 0) || !(total > 0)) continue;
    html += '<span title="' + esc(label) + ": " + pct(v / total) + '" style="width:' + (100 * v / total) + "%;background:" + colour + '"></span>';
  }
  return html + "</div>";
}
function legend(items) {
  return '<div class="legend">' + items.map(([_, label, colour]) => '<span><i class="sw" style="background:' + colour + '"></i>' + esc(label) + "</span>").join("") + "</div>";
}

// ---- the runs' entities: summary entry + roofline points by scope and name ------------------
const clock = r => (r.summary.seconds > 0 ? r.summary.cycles / r.summary.seconds : 0);
for (const r of runs) {
  r.entities = new Map();
  const key = (scope, name) => scope + "\u0000" + name;
  const get = (scope, name) => {
    const k = key(scope, name);
    if (!r.entities.has(k)) r.entities.set(k, {scope, name, points: {}, summary: null, energy: null});
    return r.entities.get(k);
  };
  get("network", "network").summary = r.summary;
  for (const o of r.summary.ops) get("op", o.name).summary = o;
  for (const g of r.summary.groups) get("group", g.name).summary = g;
  for (const p of r.roofline.points) get(p.scope, p.name).points[p.level] = p;
  if (r.roofline.energy) for (const p of r.roofline.energy.points) get(p.scope, p.name).energy = p;
  r.entity = (scope, name) => r.entities.get(key(scope, name));
  r.roof = name => r.roofline.roofs.find(x => x.name === name);
}

// ---- header and summary ---------------------------------------------------------------------
document.getElementById("title").textContent = DATA.title;
document.getElementById("sub").textContent = runs.map(r => (compare ? r.label + ": " : "") + r.summary.workload + " on " +
  r.summary.config_name + ", fusion " + r.summary.fusion).join("  ·  ") + "  ·  generated by npusim from the run's trace";

function headline(r) {
  const sm = r.summary, mac = r.roof("MAC array");
  const ops = 2 * sm.macs + sm.vector_ops;
  return [
    ["time", si(sm.seconds, "s"), int(sm.cycles) + " cycles"],
    ["achieved", si(sm.achieved_ops_per_second, "ops/s"), pct(sm.achieved_ops_per_second / mac.value) + " of the MAC peak"],
    ["MAC utilisation", pct(sm.mac_utilization), si(sm.macs, "MACs")],
    ["DRAM traffic", si(sm.dram_read_bytes + sm.dram_write_bytes, "B"), "read " + si(sm.dram_read_bytes, "B") + " · write " + si(sm.dram_write_bytes, "B")],
    ["intensity", sm.arithmetic_intensity === null ? "–" : sm.arithmetic_intensity.toFixed(1) + " ops/B", "per DRAM byte"],
    ["bound", badge(sm.bound), sm.latency_cause ? "dominant loss: " + esc(sm.latency_cause) : ""],
    ["energy", sm.energy_j === null ? "–" : si(sm.energy_j, "J"), sm.energy_j ? si(ops / sm.energy_j, "ops/J") + " · " + si(sm.energy_j / sm.seconds, "W") : "no energy model"],
  ];
}
{
  const sec = section(compare ? "Summary: " + runs[0].label + " vs " + runs[1].label : "Summary");
  if (!compare) {
    const cards = h("div", {class: "cards"});
    for (const [k, v, sub] of headline(runs[0]))
      cards.appendChild(h("div", {class: "card"}, '<div class="k">' + esc(k) + '</div><div class="v">' + v + '</div><div class="k">' + sub + "</div>"));
    sec.appendChild(cards);
  } else {
    const rows = runs.map(headline);
    let t = '<table><tr><th class="l"></th>' + runs.map(r => "<th>" + esc(r.label) + "</th>").join("") + "<th>" + esc(runs[1].label) + " / " + esc(runs[0].label) + "</th></tr>";
    const ratio = (f) => { const a = f(runs[0].summary), b = f(runs[1].summary); return a > 0 && b !== null ? (b / a).toFixed(3) + "×" : "–"; };
    const ratios = [ratio(x => x.seconds), ratio(x => x.achieved_ops_per_second), ratio(x => x.mac_utilization),
      ratio(x => x.dram_read_bytes + x.dram_write_bytes), ratio(x => x.arithmetic_intensity), "", ratio(x => x.energy_j)];
    rows[0].forEach((row, i) => { t += '<tr><td class="l">' + esc(row[0]) + "</td>" + rows.map(rr => "<td>" + rr[i][1] + '<div class="note">' + rr[i][2] + "</div></td>").join("") + "<td>" + ratios[i] + "</td></tr>"; });
    sec.appendChild(h("div", {}, t + "</table>"));
  }
  const v = runs.flatMap(r => r.roofline.violations.map(x => (compare ? r.label + ": " : "") + x));
  if (v.length) sec.appendChild(h("p", {class: "warn"}, "Points above their roof (a model or counting error): " + v.map(esc).join("<br>")));
}

// ---- log-log plots --------------------------------------------------------------------------
function decades(values, pad) {
  const ok = values.filter(v => v > 0 && isFinite(v));
  if (!ok.length) return [1e-2, 1e4];
  return [Math.pow(10, Math.floor(Math.log10(Math.min(...ok) / pad))), Math.pow(10, Math.ceil(Math.log10(Math.max(...ok) * pad)))];
}
function logplot(holder, xr, yr, xlabel, ylabel, yunit) {
  const W = 900, H = 600, m = {l: 74, r: 18, t: 14, b: 50};
  const svg = s("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, class: "plot"});
  holder.appendChild(svg);
  const lx = Math.log10(xr[0]), hx = Math.log10(xr[1]), ly = Math.log10(yr[0]), hy = Math.log10(yr[1]);
  const X = x => m.l + (Math.log10(x) - lx) / (hx - lx) * (W - m.l - m.r);
  const Y = y => H - m.b - (Math.log10(y) - ly) / (hy - ly) * (H - m.t - m.b);
  const grid = s("g", {}, svg);
  for (let d = Math.floor(lx); d <= hx; d++) for (let k = 1; k < 10; k++) {
    const v = k * Math.pow(10, d); if (v < xr[0] || v > xr[1]) continue;
    s("line", {x1: X(v), x2: X(v), y1: m.t, y2: H - m.b, stroke: k === 1 ? "#dde1e6" : "#f1f3f5"}, grid);
    if (k === 1) s("text", {x: X(v), y: H - m.b + 16, "text-anchor": "middle", "font-size": 11, fill: "#444"}, grid).textContent = si(v, "").trim();
  }
  for (let d = Math.floor(ly); d <= hy; d++) for (let k = 1; k < 10; k++) {
    const v = k * Math.pow(10, d); if (v < yr[0] || v > yr[1]) continue;
    s("line", {x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v), stroke: k === 1 ? "#dde1e6" : "#f1f3f5"}, grid);
    if (k === 1) s("text", {x: m.l - 6, y: Y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#444"}, grid).textContent = si(v, "").trim();
  }
  s("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "none", stroke: "#888"}, svg);
  s("text", {x: (m.l + W - m.r) / 2, y: H - 12, "text-anchor": "middle", "font-size": 13}, svg).textContent = xlabel;
  const yl = s("text", {x: 16, y: (m.t + H - m.b) / 2, "text-anchor": "middle", "font-size": 13, transform: "rotate(-90 16 " + (m.t + H - m.b) / 2 + ")"}, svg);
  yl.textContent = ylabel;
  const clip = "clip" + Math.random().toString(36).slice(2);
  const defs = s("defs", {}, svg);
  s("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b}, s("clipPath", {id: clip}, defs));
  const body = s("g", {"clip-path": "url(#" + clip + ")"}, svg);
  const angle = slope => -Math.atan2(slope * (H - m.t - m.b) / (hy - ly), (W - m.l - m.r) / (hx - lx)) * 180 / Math.PI;
  return {svg, body, X, Y, xr, yr, angle, W, H, m};
}
function text(p, x, y, str, attrs) {
  const t = s("text", Object.assign({x, y, "font-size": 11}, attrs || {}), p.body);
  t.textContent = str;
  return t;
}
function shape(p, scope, cx, cy, r, fill, stroke, cls) {
  let e;
  if (scope === "op") e = s("circle", {cx, cy, r}, p.body);
  else if (scope === "group") e = s("rect", {x: cx - r, y: cy - r, width: 2 * r, height: 2 * r}, p.body);
  else e = s("polygon", {points: [[cx, cy - r * 1.4], [cx + r * 1.4, cy], [cx, cy + r * 1.4], [cx - r * 1.4, cy]].map(q => q.join(",")).join(" ")}, p.body);
  e.setAttribute("fill", fill);
  e.setAttribute("stroke", stroke);
  e.setAttribute("stroke-width", 1.5);
  e.setAttribute("fill-opacity", fill === "#fff" ? 0.6 : 0.85);
  e.setAttribute("class", "pt " + cls);
  return e;
}
const radius = share => 3 + 9 * Math.sqrt(Math.max(0, Math.min(1, share || 0)));

// ---- hover details ---------------------------------------------------------------------------
const tip = document.getElementById("tip");
function hover(e, html) {
  e.addEventListener("mouseenter", ev => { tip.innerHTML = html(); tip.style.display = "block"; place(ev); });
  e.addEventListener("mousemove", place);
  e.addEventListener("mouseleave", () => { tip.style.display = "none"; });
}
function place(ev) {
  const w = tip.offsetWidth, hgt = tip.offsetHeight;
  tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - w - 8) + "px";
  tip.style.top = Math.min(ev.clientY + 14, window.innerHeight - hgt - 8) + "px";
}
function details(r, ent) {
  const sm = ent.summary || {}, d = ent.points.dram, sr = ent.points.sram, p = d || sr;
  const rows = [];
  const scopeText = ent.scope === "group" ? "fused group (" + esc(sm.fusion) + ")" : ent.scope;
  rows.push("<b>" + esc(ent.name) + "</b> " + badge(p ? p.bound : sm.bound || "none") +
    (p && p.latency_cause ? ' <span class="dim">dominant loss: ' + esc(p.latency_cause) + "</span>" : ""));
  rows.push('<span class="dim">' + (compare ? esc(r.label) + " · " : "") + scopeText + (sm.kind ? " · " + esc(sm.kind) : "") + "</span>");
  if (ent.scope === "group" && sm.members)
    rows.push("members: " + esc(sm.members.slice(0, 8).join(", ")) + (sm.members.length > 8 ? ", … (" + sm.members.length + " in all)" : ""));
  if (ent.scope === "op" && sm.group) rows.push("group: " + esc(sm.group));
  if (p) {
    rows.push("achieved " + si(p.ops_per_second, "ops/s") + " · " + pct(Math.max(d ? d.fraction_of_roof : 0, sr ? sr.fraction_of_roof : 0)) +
      " of roof (binding: " + esc(p.binding_roof) + ")");
    rows.push("intensity: DRAM " + (d ? d.intensity.toPrecision(3) : "–") + " · SRAM " + (sr ? sr.intensity.toPrecision(3) : "–") + " ops/B" +
      ' <span class="dim">(bottleneck: ' + ((d && d.bottleneck) ? "DRAM" : (sr && sr.bottleneck) ? "SRAM" : "–") + ")</span>");
    if (p.derated_peak < 0.999 * p.peak) rows.push("derated peak " + si(p.derated_peak, "ops/s") + " = " + pct(p.derated_peak / p.peak) + " of " + esc(p.compute_roof) + " (array shape)");
  }
  rows.push("cycles " + int(sm.cycles) + " · " + si(sm.seconds, "s") + (sm.time_share !== undefined ? " · time share " + pct(sm.time_share) : ""));
  rows.push("bytes: DRAM " + si(sm.dram_read_bytes + sm.dram_write_bytes, "B") + " · SRAM " + si(sm.sram_read_bytes + sm.sram_write_bytes, "B") + " · " + si(sm.macs, "MACs"));
  if (sm.energy_j !== null && sm.energy_j !== undefined) {
    rows.push("energy " + si(sm.energy_j, "J") + ' <span class="dim">(dynamic ' + si(sm.energy.dynamic_j, "J") + ", standing " + si(sm.energy.standing_j, "J") + ")</span>" +
      (ent.energy ? " · " + si(ent.energy.ops_per_joule, "ops/J") : ""));
  }
  if (sm.stalls && sm.stalls.unit) {
    const st = sm.stalls;
    rows.push('<span class="dim">' + esc(st.unit) + " time:</span> " + STALLS.filter(([k]) => st[k] > 0.005 * st.span_s)
      .map(([k, label]) => esc(label) + " " + pct(st[k] / st.span_s, 0)).join(" · "));
  }
  return rows.map(x => '<div class="row">' + x + "</div>").join("");
}

// ---- performance roofline ---------------------------------------------------------------------
function performanceRoofline(sec) {
  const xs = [], ys = [];
  for (const r of runs) {
    const comp = r.roofline.roofs.filter(x => x.kind === "compute"), mem = r.roofline.roofs.filter(x => x.kind === "memory");
    for (const c of comp) { ys.push(c.value); for (const mm of mem) xs.push(c.value / mm.value); }
    for (const p of r.roofline.points) { xs.push(p.intensity); ys.push(p.ops_per_second); ys.push(p.attainable); }
  }
  const controls = h("div", {class: "controls"});
  const holder = h("div");
  sec.appendChild(controls);
  sec.appendChild(holder);
  const p = logplot(holder, decades(xs, 3), decades(ys, 3), "arithmetic intensity (ops/byte)", "performance (ops/s)");
  const toggles = [["op", "ops"], ["group", "groups"], ["network", "network"]].concat(compare ? [] : [["sram", "SRAM-level points"], ["derated", "derated roofs"]]);
  for (const [cls, label] of toggles) {
    const box = h("input", {type: "checkbox"});
    box.checked = true;
    box.addEventListener("change", () => holder.classList.toggle("hide-" + cls, !box.checked));
    const l = h("label");
    l.appendChild(box);
    l.appendChild(document.createTextNode(" " + label));
    controls.appendChild(l);
  }
  const sameRoofs = !compare || JSON.stringify(runs[0].roofline.roofs.map(x => x.value)) === JSON.stringify(runs[1].roofline.roofs.map(x => x.value));
  runs.forEach((r, i) => { if (i === 0 || !sameRoofs) drawRoofs(p, r, ROOF[sameRoofs ? 0 : i]); });
  runs.forEach((r, i) => drawPoints(p, r, i));
  if (compare) drawArrows(p);
  text(p, p.m.l + 8, p.m.t + 16, "1 MAC = 2 ops", {fill: "#444"});
  sec.appendChild(h("div", {}, legend([[0, "compute-bound", BOUND.compute], [0, "memory-bound", BOUND.memory], [0, "latency-bound", BOUND.latency]]) +
    '<div class="note">circle = op · square = fused group · diamond = network · size: share of run time · ' +
    (compare ? "open = " + esc(runs[0].label) + ", filled = " + esc(runs[1].label) + "; arrows: each op of " + esc(runs[0].label) + " to where it runs in " + esc(runs[1].label)
      : "filled = DRAM intensity, open = SRAM intensity (same height: the hierarchical roofline); dashed ticks: an op's derated roof (array shape); dashed roof: MAC array + vector unit") +
    ". Hover a point for its details.</div>"));
}
function drawRoofs(p, r, colour) {
  const comp = r.roofline.roofs.filter(x => x.kind === "compute" && x.value > 0), mem = r.roofline.roofs.filter(x => x.kind === "memory" && x.value > 0);
  const top = Math.max(...comp.map(x => x.value)), topBw = Math.max(...mem.map(x => x.value));
  const [x0, x1] = p.xr, [y0, y1] = p.yr;
  for (const mm of mem) {
    const xa = Math.max(x0, y0 / mm.value), xb = Math.min(x1, top / mm.value);
    if (xb <= xa) continue;
    s("line", {x1: p.X(xa), y1: p.Y(xa * mm.value), x2: p.X(xb), y2: p.Y(xb * mm.value), stroke: colour, "stroke-width": 2}, p.body);
    const xl = Math.max(xa * 1.4, y0 * Math.pow(y1 / y0, 0.15) / mm.value);
    text(p, p.X(xl), p.Y(xl * mm.value) - 6, mm.name + " " + si(mm.value, "B/s") + " (ridge " + (top / mm.value).toPrecision(3) + " ops/B)",
      {fill: colour, transform: "rotate(" + p.angle(1) + " " + p.X(xl) + " " + (p.Y(xl * mm.value) - 6) + ")"});
    const dot = s("circle", {cx: p.X(xb), cy: p.Y(top), r: 3.5, fill: "#fff", stroke: colour}, p.body);
    dot.appendChild(s("title", {})).textContent = "ridge of " + mm.name + " with the top compute roof: " + (top / mm.value).toPrecision(3) + " ops/B";
  }
  const flat = (label, v, dash) => {
    const xa = Math.max(x0, v / topBw);
    const l = s("line", {x1: p.X(xa), y1: p.Y(v), x2: p.X(x1), y2: p.Y(v), stroke: colour, "stroke-width": 2, "stroke-dasharray": dash}, p.body);
    if (dash) l.appendChild(s("title", {})).textContent = label;  // next to a plain roof: named on hover
    else text(p, p.X(x1) - 6, p.Y(v) - 6, label, {fill: colour, "text-anchor": "end"});
  };
  for (const c of comp) flat(c.name + (c.dtype ? " " + c.dtype : "") + " " + si(c.value, "ops/s"), c.value, "");
  if (comp.length === 2 && r.roofline.points.some(q => q.compute_roof.indexOf("+") >= 0))
    flat("MAC array + vector unit " + si(comp[0].value + comp[1].value, "ops/s") + " (groups and the network use both units)",
      comp[0].value + comp[1].value, "6 4");
}
// A group whose point is one of its ops' (an unfused op, or one fused only with views) would hide
// the op's marker; the op's marker says it all.
function sameAsAnOp(list, q, y) {
  return q.scope === "group" && list.some(o => o.scope === "op" && o.level === q.level && o.intensity === q.intensity && y(o) === y(q));
}
function drawPoints(p, r, index) {
  const all = r.roofline.points;
  const pts = all.filter(q => (!compare || q.level === "dram") && !sameAsAnOp(all, q, o => o.ops_per_second));
  // Big markers first, so small ones stay on top and reachable.
  pts.sort((a, b) => (b.time_share || 0) - (a.time_share || 0));
  for (const q of pts) {
    const ent = r.entity(q.scope, q.name), colour = BOUND[q.bound] || BOUND.none;
    const filled = compare ? index === 1 : q.level === "dram";
    if (!compare && q.scope === "op" && q.level === "dram" && q.derated_peak < 0.95 * q.peak) {
      const t = s("line", {x1: p.X(q.intensity / 1.4), x2: p.X(q.intensity * 1.4), y1: p.Y(q.derated_peak), y2: p.Y(q.derated_peak),
        stroke: colour, "stroke-width": 1.5, "stroke-dasharray": "4 3", class: "derated scope-op"}, p.body);
      t.appendChild(s("title", {})).textContent = q.name + ": derated roof " + si(q.derated_peak, "ops/s");
    }
    const e = shape(p, q.scope, p.X(q.intensity), p.Y(q.ops_per_second), radius(q.time_share), filled ? colour : "#fff", colour,
      "scope-" + q.scope + " level-" + q.level);
    const viol = q.ops_per_second > q.attainable * 1.001;
    if (viol) s("circle", {cx: p.X(q.intensity), cy: p.Y(q.ops_per_second), r: radius(q.time_share) + 6, fill: "none", stroke: "#d62728", "stroke-width": 2.5}, p.body);
    hover(e, () => (viol ? '<div class="warn">above its roof: a model or counting error</div>' : "") + details(r, ent));
  }
  // Labels last, so no marker covers them.
  for (const q of pts.filter(x => x.scope === "network" && x.level === "dram"))
    text(p, p.X(q.intensity) + 16, p.Y(q.ops_per_second) - 10, (compare ? r.label + " " : "") + "network", {fill: "#111", "font-weight": 600, stroke: "#fff", "stroke-width": 3, "paint-order": "stroke"});
}
function findDram(r, name, scopes) {
  for (const sc of scopes) { const e = r.entity(sc, name); if (e && e.points.dram) return e.points.dram; }
  return null;
}
function drawArrows(p) {
  const defs = s("defs", {}, p.svg);
  const mk = s("marker", {id: "arrowhead", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"}, defs);
  s("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#333"}, mk);
  for (const a of DATA.arrows) {
    const from = findDram(runs[0], a.from, ["op", "group", "network"]), to = findDram(runs[1], a.to, ["group", "op", "network"]);
    if (!from || !to) continue;
    s("line", {x1: p.X(from.intensity), y1: p.Y(from.ops_per_second), x2: p.X(to.intensity), y2: p.Y(to.ops_per_second),
      stroke: "#333", "stroke-opacity": 0.45, "stroke-width": 1.1, "marker-end": "url(#arrowhead)"}, p.body);
  }
}

// ---- energy roofline ---------------------------------------------------------------------------
function energyRoofline(sec) {
  const withEnergy = runs.filter(r => r.roofline.energy);
  const xs = [], ys = [];
  for (const r of withEnergy) {
    const dram = r.roofline.energy.roofs.find(x => x.name === "DRAM");
    for (const c of r.roofline.energy.roofs.filter(x => x.kind === "compute" && x.value > 0)) { ys.push(1 / c.value); if (dram) xs.push(dram.value / c.value); }
    for (const q of r.roofline.energy.points) { xs.push(q.intensity); ys.push(q.ops_per_joule); }
  }
  const holder = h("div");
  sec.appendChild(holder);
  const p = logplot(holder, decades(xs, 3), decades(ys, 3), "arithmetic intensity (ops per DRAM byte)", "energy efficiency (ops/J)");
  const sameRoofs = withEnergy.every(r => JSON.stringify(r.roofline.energy.roofs) === JSON.stringify(withEnergy[0].roofline.energy.roofs));
  withEnergy.forEach((r, i) => {
    const colour = ROOF[sameRoofs ? 0 : i];
    const drawRoof = i === 0 || !sameRoofs;
    const dram = r.roofline.energy.roofs.find(x => x.name === "DRAM"), dj = dram ? dram.value : 0;
    for (const c of r.roofline.energy.roofs.filter(x => drawRoof && x.kind === "compute" && x.value > 0)) {
      let d = "";
      for (let k = 0; k <= 240; k++) {
        const x = p.xr[0] * Math.pow(p.xr[1] / p.xr[0], k / 240), y = 1 / (c.value + dj / x);
        d += (k ? "L" : "M") + p.X(x).toFixed(1) + " " + p.Y(Math.max(y, p.yr[0] / 10)).toFixed(1);
      }
      s("path", {d, fill: "none", stroke: colour, "stroke-width": 2, "stroke-dasharray": c.name === "MAC array" ? "" : "5 4"}, p.body);
      const dtype = c.name === "MAC array" ? (r.roof("MAC array").dtype || "") : "";
      text(p, p.X(p.xr[1]) - 6, p.Y(1 / c.value) - 6, c.name + (dtype ? " " + dtype : "") + " " + si(1 / c.value, "ops/J") + " (" + si(c.value, "J/op") + ")", {fill: colour, "text-anchor": "end"});
    }
    if (dj > 0 && drawRoof) {
      const xa = Math.max(p.xr[0], p.yr[0] * dj), xb = p.xr[1];
      s("line", {x1: p.X(xa), y1: p.Y(xa / dj), x2: p.X(xb), y2: p.Y(xb / dj), stroke: colour, "stroke-width": 1, "stroke-dasharray": "2 3"}, p.body);
      const xl = Math.max(xa * 1.4, p.yr[0] * Math.pow(p.yr[1] / p.yr[0], 0.15) * dj);
      text(p, p.X(xl), p.Y(xl / dj) - 6, "DRAM " + si(dj, "J/B"), {fill: colour, transform: "rotate(" + p.angle(1) + " " + p.X(xl) + " " + (p.Y(xl / dj) - 6) + ")"});
    }
    const allE = r.roofline.energy.points;
    const pts = allE.filter(q => !sameAsAnOp(allE, q, o => o.ops_per_joule)).sort((a, b) => b.energy_share - a.energy_share);
    for (const q of pts) {
      const colourPt = BOUND[q.bound] || BOUND.none, ent = r.entity(q.scope, q.name);
      const e = shape(p, q.scope, p.X(q.intensity), p.Y(q.ops_per_joule), radius(q.energy_share), withEnergy.length > 1 && i === 0 ? "#fff" : colourPt, colourPt, "scope-" + q.scope);
      hover(e, () => details(r, ent) + '<div class="row">energy roof at this intensity ' + si(q.attainable_ops_per_joule, "ops/J") + " · " + pct(q.fraction_of_roof) + " of it</div>");
    }
    for (const q of pts.filter(x => x.scope === "network"))
      text(p, p.X(q.intensity) + 16, p.Y(q.ops_per_joule) - 10, (withEnergy.length > 1 ? r.label + " " : "") + "network", {fill: "#111", "font-weight": 600, stroke: "#fff", "stroke-width": 3, "paint-order": "stroke"});
  });
  text(p, p.m.l + 8, p.m.t + 16, "1 MAC = 2 ops; the roofs count MAC, vector and DRAM energy only", {fill: "#444"});
  sec.appendChild(h("div", {}, legend([[0, "compute-bound", BOUND.compute], [0, "memory-bound", BOUND.memory], [0, "latency-bound", BOUND.latency]]) +
    '<div class="note">Energy per op at intensity I is at least (J per op) + (J per DRAM byte) / I; SRAM traffic and standing power (static + DRAM background, shared by time) put points below their roof. Size: share of energy.</div>'));
}

// ---- tables -----------------------------------------------------------------------------------
function bestFraction(ent) {
  const d = ent && ent.points.dram, sr = ent && ent.points.sram;
  return Math.max(d ? d.fraction_of_roof : 0, sr ? sr.fraction_of_roof : 0) || null;
}
function topTable(r, list, scope, n, title) {
  const rows = list.slice().sort((a, b) => b.time_share - a.time_share).slice(0, n);
  const maxShare = Math.max(...rows.map(x => x.time_share), 1e-9);
  let t = (title ? "<h3>" + esc(title) + "</h3>" : "") + '<table><tr><th>#</th><th class="l">' + scope + '</th><th class="l">' + (scope === "op" ? "kind" : "members") +
    '</th><th class="l">time share</th><th>cycles (span)</th><th class="l">bound</th><th>% of roof</th><th>intensity</th><th>DRAM</th><th>energy</th><th class="l">where the time went</th></tr>';
  rows.forEach((o, i) => {
    const ent = r.entity(scope, o.name), st = o.stalls;
    const what = scope === "op" ? esc(o.kind) : esc(o.members.length > 3 ? o.members.slice(0, 3).join(", ") + ", … (" + o.members.length + ")" : o.members.join(", "));
    t += "<tr><td>" + (i + 1) + '</td><td class="l">' + esc(o.name) + '</td><td class="l clip" title="' + esc(scope === "op" ? o.kind : o.members.join(", ")) + '">' + what + '</td><td class="l"><span class="share" style="width:' +
      (60 * o.time_share / maxShare).toFixed(1) + 'px"></span>' + pct(o.time_share) + "</td><td>" + int(o.cycles) + '</td><td class="l">' + badge(o.bound) +
      (o.latency_cause ? " " + esc(o.latency_cause) : "") + "</td><td>" + pct(bestFraction(ent)) + "</td><td>" +
      (o.arithmetic_intensity === null ? "–" : o.arithmetic_intensity.toPrecision(3)) + "</td><td>" + si(o.dram_read_bytes + o.dram_write_bytes, "B") +
      "</td><td>" + (o.energy_j === null ? "–" : si(o.energy_j, "J")) + "</td><td>" +
      (st && st.unit ? stacked(STALLS.map(([k, l, c]) => [st[k], l, c]), st.span_s) : "") + "</td></tr>";
  });
  return t + "</table>";
}
function stallSection(sec) {
  for (const r of runs) {
    const st = r.summary.stalls;
    if (!st || !st.unit) continue;
    sec.appendChild(h("div", {}, "<h3>" + (compare ? esc(r.label) + ": " : "") + "the " + esc(st.unit) + " over the whole run (" + si(st.span_s, "s") + ")</h3>" +
      stacked(STALLS.map(([k, l, c]) => [st[k], l, c]), st.span_s, "wide") +
      '<table style="margin-top:6px">' + STALLS.map(([k, l, c]) => '<tr><td class="l"><i class="sw" style="background:' + c + '"></i>' + esc(l) + "</td><td>" + si(st[k], "s") + "</td><td>" + pct(st[k] / st.span_s) + "</td></tr>").join("") + "</table>"));
  }
  sec.appendChild(h("div", {class: "note"}, "The critical unit's time, split so the parts add up to the span: work at peak (MACs / (rows × cols) cycles), fill/drain (stall-free cycles beyond that: fold pipeline fill and drain, rows or columns the shape leaves idle), SRAM stall (operands starved by the banks' bandwidth), SRAM bank conflict (one cycle's operands hit one bank beyond its ports), DMA wait (idle until a DMA load it needs, or until its results were stored), dependency (idle until another unit's result or its group's SRAM grant), queueing (ready, but the unit ran other work). Definitions: docs/outputs.md."));
}
function energySection(sec) {
  for (const r of runs) {
    const e = r.summary.energy;
    if (!e) { sec.appendChild(h("p", {class: "note"}, (compare ? esc(r.label) + ": " : "") + "no energy model in this run's config (npu.energy)")); continue; }
    const topOps = r.summary.ops.filter(o => o.energy_j).sort((a, b) => b.energy_j - a.energy_j).slice(0, 8);
    sec.appendChild(h("div", {}, "<h3>" + (compare ? esc(r.label) + ": " : "") + si(e.total_j, "J") + " in " + si(r.summary.seconds, "s") + " (average " + si(e.total_j / r.summary.seconds, "W") + ")</h3>" +
      stacked(ENERGY.map(([k, l, c]) => [e[k], l, c]), e.total_j, "wide") + legend(ENERGY.map(([k, l, c]) => [0, l + " " + pct(e[k] / e.total_j), c])) +
      '<table><tr><th class="l">op (by energy)</th><th>energy</th><th>share</th><th class="l">components</th></tr>' +
      topOps.map(o => '<tr><td class="l">' + esc(o.name) + "</td><td>" + si(o.energy_j, "J") + "</td><td>" + pct(o.energy_j / e.total_j) + "</td><td>" +
        stacked(ENERGY.map(([k, l, c]) => [o.energy[k], l, c]), o.energy_j) + "</td></tr>").join("") + "</table>"));
  }
  sec.appendChild(h("div", {class: "note"}, "Dynamic energy counts events (MACs, vector ops, SRAM and DRAM bytes); standing energy (static, DRAM background) is power × time, shared among ops by their share of wall time, so per-op energies sum to the total. Model and sources: docs/energy.md."));
}
function unitSection(sec) {
  for (const r of runs) {
    let t = (compare ? "<h3>" + esc(r.label) + "</h3>" : "") + '<table><tr><th class="l">unit</th><th class="l">busy</th><th></th><th>commands</th></tr>';
    for (const u of r.summary.units_busy)
      t += '<tr><td class="l">' + esc(u.name) + '</td><td class="l">' + stacked([[u.busy_fraction, "busy", "#4c6ef5"], [1 - u.busy_fraction, "idle", "#edf0f3"]], 1) + "</td><td>" + pct(u.busy_fraction) + "</td><td>" + int(u.commands) + "</td></tr>";
    sec.appendChild(h("div", {}, t + "</table>"));
  }
  sec.appendChild(h("div", {class: "note"}, "Busy: the sum of the unit's command durations over the run's time. MAC utilisation (summary) also counts the multiply slots a busy array leaves idle."));
}

performanceRoofline(section(compare ? "Roofline: " + runs[0].label + " → " + runs[1].label : "Roofline (hierarchical: DRAM and SRAM intensity)"));
if (runs.some(r => r.roofline.energy)) energyRoofline(section("Energy roofline"));
{
  const sec = section("Top ops by time");
  for (const r of runs) {
    sec.appendChild(h("div", {}, topTable(r, r.summary.ops.filter(o => o.time_share > 0), "op", 15, compare ? r.label : "")));
    const fused = r.summary.groups.filter(g => g.members.length > 1 && g.time_share > 0);
    if (fused.length) sec.appendChild(h("div", {}, topTable(r, fused, "group", 8, (compare ? r.label + ": " : "") + "top fused groups by time")));
  }
  sec.appendChild(h("div", {class: "note"}, "Time share: each instant of the run shared equally among the ops with a command in flight (it sums to 100 %); cycles: the op's span, first command begin to last end (spans overlap). Latency-bound: below " +
    pct(runs[0].roofline.latency_bound_fraction, 0) + " of the binding roof."));
}
stallSection(section("Stall breakdown"));
energySection(section("Energy"));
unitSection(section("Unit utilisation"));
})();
</script>
</body></html>
)HTML";

}  // namespace npusim::traces::report_page
