// The energy roofline: ops per joule against DRAM intensity; the roof at intensity I is
// 1 / (J per op + J per DRAM byte / I) (docs/energy.md).
import {axisBottom, axisLeft, format, scaleLog, select} from "d3";
import {BOUND, legend, si} from "./format.js";
import {flatAxis, markerPath} from "./marks.js";
import {details, hideTip, moveTip, showTip} from "./tooltip.js";

const W = 900, H = 480, M = {l: 74, r: 24, t: 14, b: 50};

export function energyRoofline(holder, r) {
  holder.innerHTML = "";
  const e = r.roofline.energy;
  if (!e) { holder.innerHTML = '<p class="note">No energy model in this run\'s config (npu.energy).</p>'; return; }
  const dram = e.roofs.find(x => x.name === "DRAM"), dj = dram ? dram.value : 0;
  const comp = e.roofs.filter(x => x.kind === "compute" && x.value > 0);
  const xs = e.points.map(q => q.intensity).concat(comp.map(c => dj / c.value));
  const ys = e.points.map(q => q.ops_per_joule).concat(comp.map(c => 1 / c.value));
  const dec = (v, pad) => { const ok = v.filter(a => a > 0 && isFinite(a)); return ok.length ? [10 ** Math.floor(Math.log10(Math.min(...ok) / pad)), 10 ** Math.ceil(Math.log10(Math.max(...ok) * pad))] : [1e-2, 1e4]; };
  const xr = dec(xs, 3), yr = dec(ys, 3);
  const x = scaleLog().domain(xr).range([M.l, W - M.r]), y = scaleLog().domain(yr).range([H - M.b, M.t]).clamp(true);
  const svg = select(holder).append("svg").attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H).attr("class", "plot energy-roofline");
  const tick = format("~s");
  flatAxis(svg.append("g").attr("transform", `translate(0,${H - M.b})`), axisBottom(x).ticks(8, v => (Math.log10(v) % 1 === 0 ? tick(v) : "")));
  flatAxis(svg.append("g").attr("transform", `translate(${M.l},0)`), axisLeft(y).ticks(8, v => (Math.log10(v) % 1 === 0 ? tick(v) : "")));
  svg.append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b).attr("fill", "none").attr("stroke", "#888");
  svg.append("text").attr("x", (M.l + W - M.r) / 2).attr("y", H - 10).attr("text-anchor", "middle").attr("font-size", 13).text("arithmetic intensity (ops per DRAM byte)");
  svg.append("text").attr("transform", `translate(16,${(M.t + H - M.b) / 2}) rotate(-90)`).attr("text-anchor", "middle").attr("font-size", 13).text("energy efficiency (ops/J)");
  for (const c of comp) {
    let d = "";
    for (let k = 0; k <= 200; k++) {
      const xi = xr[0] * (xr[1] / xr[0]) ** (k / 200);
      d += (k ? "L" : "M") + x(xi).toFixed(1) + " " + y(1 / (c.value + dj / xi)).toFixed(1);
    }
    svg.append("path").attr("d", d).attr("fill", "none").attr("stroke", "#555").attr("stroke-width", 2).attr("stroke-dasharray", c.name === "MAC array" ? null : "5 4");
    svg.append("text").attr("x", W - M.r - 6).attr("y", y(1 / c.value) - 6).attr("text-anchor", "end").attr("font-size", 11).attr("fill", "#555")
      .text(c.name + " " + si(1 / c.value, "ops/J") + " (" + si(c.value, "J/op") + ")");
  }
  const pts = e.points.slice().sort((a, b) => b.energy_share - a.energy_share);
  const radius = s => 3 + 9 * Math.sqrt(Math.max(0, Math.min(1, s || 0)));
  svg.append("g").selectAll("path").data(pts).join("path").attr("class", q => "pt scope-" + q.scope)
    .attr("d", q => markerPath(q.scope, 3.5 * radius(q.energy_share) ** 2, x(q.intensity), y(q.ops_per_joule)))
    .attr("fill", q => BOUND[q.bound] || BOUND.none).attr("fill-opacity", 0.85).attr("stroke", q => BOUND[q.bound] || BOUND.none)
    .on("mouseenter", (ev, q) => showTip(ev, details(r, r.entity(q.scope, q.name), false) + '<div class="row">energy roof here ' + si(q.attainable_ops_per_joule, "ops/J") + "</div>"))
    .on("mousemove", moveTip).on("mouseleave", hideTip);
  const note = document.createElement("div");
  note.innerHTML = legend([["compute-bound", BOUND.compute], ["memory-bound", BOUND.memory], ["latency-bound", BOUND.latency]]) +
    '<div class="note">Energy per op at intensity I is at least (J per op) + (J per DRAM byte) / I; SRAM traffic and standing power put points below their roof. Size: share of energy.</div>';
  holder.appendChild(note);
}
