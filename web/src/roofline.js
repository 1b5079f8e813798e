// The hierarchical roofline, drawn with d3: DRAM and SRAM roofs, compute roofs, op / group /
// network points (DRAM intensity filled, SRAM intensity open; with an unfused companion run, its
// ops open with arrows to where they run fused). Points are keyed by run role, scope, name and
// level, so an update moves each point from where it was to where it is now.
import {axisBottom, axisLeft, format, scaleLog, select, symbol, symbolCircle, symbolDiamond, symbolSquare} from "d3";
import "d3-transition";
import {BOUND, esc, legend, si} from "./format.js";
import {findDram} from "./model.js";
import {details, hideTip, moveTip, showTip} from "./tooltip.js";

const W = 900, H = 560, M = {l: 74, r: 24, t: 14, b: 50};
const DURATION = 750;
const SHAPES = {op: symbolCircle, group: symbolSquare, network: symbolDiamond};
const radius = share => 3 + 9 * Math.sqrt(Math.max(0, Math.min(1, share || 0)));
const area = (scope, r) => (scope === "op" ? Math.PI * r * r : scope === "group" ? 4 * r * r : 4.5 * r * r);

function decades(values, pad) {
  const ok = values.filter(v => v > 0 && isFinite(v));
  if (!ok.length) return [1e-2, 1e4];
  return [10 ** Math.floor(Math.log10(Math.min(...ok) / pad)), 10 ** Math.ceil(Math.log10(Math.max(...ok) * pad))];
}

/** Roof segments of one run: each memory roof up to the highest compute roof, each compute roof from its ridge. */
function roofSegments(r, xr, yr, role) {
  const comp = r.roofline.roofs.filter(x => x.kind === "compute" && x.value > 0);
  const mem = r.roofline.roofs.filter(x => x.kind === "memory" && x.value > 0);
  if (!comp.length || !mem.length) return [];
  const top = Math.max(...comp.map(x => x.value)), fastest = Math.max(...mem.map(x => x.value));
  const segs = [];
  for (const m of mem)
    segs.push({key: role + "|mem|" + m.name, x1: Math.max(xr[0], yr[0] / m.value), x2: top / m.value, bw: m.value, kind: "memory",
      label: m.name + " " + si(m.value, "B/s"), name: m.name, def: m.definition});
  for (const c of comp)
    segs.push({key: role + "|comp|" + c.name, x1: c.value / fastest, x2: xr[1], value: c.value, kind: "compute",
      label: c.name + (c.dtype ? " " + c.dtype : "") + " " + si(c.value, "ops/s"), name: c.name, def: c.definition});
  return segs;
}

/** A group or network point that sits exactly on one of its ops' points (a single-op group) adds nothing. */
function sameAsAnOp(all, q) {
  return q.scope !== "op" && all.some(o => o.scope === "op" && o.level === q.level && o.intensity === q.intensity && o.ops_per_second === q.ops_per_second);
}

export class RooflineView {
  constructor(holder) {
    this.holder = holder;
    this.first = true;
    const controls = document.createElement("div");
    controls.className = "controls";
    holder.appendChild(controls);
    for (const [cls, label] of [["op", "ops"], ["group", "groups"], ["network", "network"], ["sram", "SRAM-level points"], ["derated", "derated roofs"]]) {
      const l = document.createElement("label");
      l.innerHTML = '<input type="checkbox" checked> ' + label;
      l.firstChild.addEventListener("change", e => holder.classList.toggle("hide-" + cls, !e.target.checked));
      controls.appendChild(l);
    }
    const svg = select(holder).append("svg").attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H).attr("class", "plot roofline");
    this.svg = svg;
    const defs = svg.append("defs");
    defs.append("clipPath").attr("id", "roof-clip").append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b);
    defs.append("marker").attr("id", "arrowhead").attr("viewBox", "0 0 10 10").attr("refX", 9).attr("refY", 5)
      .attr("markerWidth", 7).attr("markerHeight", 7).attr("orient", "auto-start-reverse")
      .append("path").attr("d", "M 0 0 L 10 5 L 0 10 z").attr("fill", "#333");
    this.gx = svg.append("g").attr("class", "axis").attr("transform", `translate(0,${H - M.b})`);
    this.gy = svg.append("g").attr("class", "axis").attr("transform", `translate(${M.l},0)`);
    svg.append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b).attr("fill", "none").attr("stroke", "#888");
    svg.append("text").attr("x", (M.l + W - M.r) / 2).attr("y", H - 10).attr("text-anchor", "middle").attr("font-size", 13).text("arithmetic intensity (ops/byte)");
    svg.append("text").attr("transform", `translate(16,${(M.t + H - M.b) / 2}) rotate(-90)`).attr("text-anchor", "middle").attr("font-size", 13).text("performance (ops/s)");
    svg.append("text").attr("x", M.l + 8).attr("y", M.t + 16).attr("font-size", 11).attr("fill", "#444").text("1 MAC = 2 ops");
    const body = svg.append("g").attr("clip-path", "url(#roof-clip)");
    // Roof labels above the points (with a white halo), so a big marker near a roof cannot hide its name.
    this.layers = {roofs: body.append("g"), derated: body.append("g"), arrows: body.append("g"), points: body.append("g"), labels: body.append("g"), names: body.append("g")};
    this.note = document.createElement("div");
    holder.appendChild(this.note);
  }

  /**
   * runs: [current] or [unfused, current]; arrows: [{from, to}] from runs[0]'s ops to runs[1];
   * baseline: a pinned run (its network point and an arrow to the current one) or null.
   */
  update(runs, arrows, baseline) {
    const compare = runs.length > 1, cur = runs[runs.length - 1];
    const all = baseline ? runs.concat([baseline]) : runs;
    const xs = [], ys = [];
    for (const r of all) {
      const comp = r.roofline.roofs.filter(x => x.kind === "compute"), mem = r.roofline.roofs.filter(x => x.kind === "memory");
      for (const c of comp) { ys.push(c.value); for (const m of mem) xs.push(c.value / m.value); }
      for (const p of r.roofline.points) { xs.push(p.intensity); ys.push(p.ops_per_second); }
    }
    const xr = decades(xs, 3), yr = decades(ys, 3);
    const x = scaleLog().domain(xr).range([M.l, W - M.r]), y = scaleLog().domain(yr).range([H - M.b, M.t]);
    const t = this.svg.transition().duration(this.first ? 0 : DURATION);
    this.first = false;
    const tick = format("~s");
    this.gx.transition(t).call(axisBottom(x).ticks(8, v => (Math.log10(v) % 1 === 0 ? tick(v) : "")));
    this.gy.transition(t).call(axisLeft(y).ticks(8, v => (Math.log10(v) % 1 === 0 ? tick(v) : "")));

    this.drawRoofs(t, x, y, cur, baseline, xr, yr);
    this.drawDerated(t, x, y, compare ? [] : cur.roofline.points.filter(q => q.scope === "op" && q.level === "dram" && q.derated_peak < 0.95 * q.peak));
    const pts = this.pointData(runs, baseline);
    this.drawPoints(t, x, y, pts, compare);
    this.drawArrows(t, x, y, compare ? arrows.map(a => ({key: a.from + "→" + a.to, from: findDram(runs[0], a.from, ["op", "group", "network"]),
      to: findDram(runs[1], a.to, ["group", "op", "network"]), cls: "arrow"})).filter(a => a.from && a.to) : [], baseline, cur);
    this.holder.dataset.points = String(pts.length);
    this.note.innerHTML = legend([["compute-bound", BOUND.compute], ["memory-bound", BOUND.memory], ["latency-bound", BOUND.latency]]) +
      '<div class="note">circle = op · square = fused group · diamond = network · size: share of run time · ' +
      (compare ? "open = " + esc(runs[0].label) + ", filled = " + esc(runs[1].label) + "; arrows: each op of " + esc(runs[0].label) + " to where it runs in " + esc(runs[1].label)
        : "filled = DRAM intensity, open = SRAM intensity (same height: the hierarchical roofline); dashed ticks: an op's derated roof (array shape)") +
      (baseline ? "; grey diamond: the pinned baseline's network point, arrow to this run's" : "") + ". Hover a point for its details.</div>";
  }

  drawRoofs(t, x, y, cur, baseline, xr, yr) {
    let segs = roofSegments(cur, xr, yr, "cur");
    if (baseline) segs = segs.concat(roofSegments(baseline, xr, yr, "base"));
    const coords = s => (s.kind === "memory" ? [x(s.x1), y(s.x1 * s.bw), x(s.x2), y(s.x2 * s.bw)] : [x(s.x1), y(s.value), x(s.x2), y(s.value)]);
    const colour = s => (s.key.startsWith("base") ? "#adb5bd" : s.kind === "memory" ? "#2ca02c" : "#555");
    this.layers.roofs.selectAll("line").data(segs, s => s.key).join(
      enter => enter.append("line").attr("stroke-width", 2).attr("opacity", 0),
      update => update,
      exit => exit.transition(t).attr("opacity", 0).remove())
      .attr("class", s => "roof " + s.kind + (s.key.startsWith("base") ? " base" : ""))
      .attr("stroke", colour).attr("stroke-dasharray", s => (s.key.startsWith("base") ? "6 4" : s.name.includes("+") ? "5 4" : null))
      .transition(t).attr("opacity", 1)
      .attr("x1", s => coords(s)[0]).attr("y1", s => coords(s)[1]).attr("x2", s => coords(s)[2]).attr("y2", s => coords(s)[3]);
    const labelled = segs.filter(s => !s.key.startsWith("base"));
    const angle = -Math.atan2(y(yr[0]) - y(yr[0] * 10), x(xr[0] * 10) - x(xr[0])) * 180 / Math.PI;
    this.layers.labels.selectAll("text").data(labelled, s => s.key).join("text").attr("font-size", 11)
      .attr("stroke", "#fff").attr("stroke-width", 3).attr("paint-order", "stroke")
      .attr("fill", colour).attr("text-anchor", s => (s.kind === "compute" ? "end" : "start"))
      .each(function (s) { const e = select(this); e.text(s.label); e.append("title").text(s.def || ""); })
      .transition(t)
      .attr("transform", s => {
        if (s.kind === "compute") return `translate(${x(s.x2) - 6},${y(s.value) - 6})`;
        const lx = Math.max(s.x1 * 1.6, xr[0] * 1.6);
        return `translate(${x(lx)},${y(lx * s.bw) - 6}) rotate(${angle})`;
      });
  }

  drawDerated(t, x, y, pts) {
    this.layers.derated.selectAll("line").data(pts, q => q.name).join(
      enter => enter.append("line").attr("stroke-width", 1.5).attr("stroke-dasharray", "4 3").attr("class", "derated scope-op"),
      update => update, exit => exit.remove())
      .attr("stroke", q => BOUND[q.bound] || BOUND.none)
      .transition(t).attr("x1", q => x(q.intensity / 1.4)).attr("x2", q => x(q.intensity * 1.4)).attr("y1", q => y(q.derated_peak)).attr("y2", q => y(q.derated_peak));
  }

  pointData(runs, baseline) {
    const compare = runs.length > 1, out = [];
    runs.forEach((r, i) => {
      const role = compare && i === 0 ? "unfused" : "cur";
      const all = r.roofline.points;
      for (const q of all) {
        if (compare && q.level !== "dram") continue;
        if (sameAsAnOp(all, q)) continue;
        const filled = compare ? i === 1 : q.level === "dram";
        out.push({key: role + "|" + q.scope + "|" + q.name + "|" + q.level, q, r, role, filled, withLabel: compare});
      }
    });
    if (baseline) {
      const q = baseline.roofline.points.find(p => p.scope === "network" && p.level === "dram");
      if (q) out.push({key: "base|network", q, r: baseline, role: "base", filled: true, withLabel: true});
    }
    // Big markers first, so small ones stay on top and reachable.
    return out.sort((a, b) => (b.q.time_share || 0) - (a.q.time_share || 0));
  }

  drawPoints(t, x, y, pts, compare) {
    const colour = d => (d.role === "base" ? "#868e96" : BOUND[d.q.bound] || BOUND.none);
    const at = d => `translate(${x(d.q.intensity)},${y(d.q.ops_per_second)})`;
    this.layers.points.selectAll("path.pt").data(pts, d => d.key).join(
      enter => enter.append("path").attr("transform", at).attr("opacity", 0)
        .on("mouseenter", (ev, d) => showTip(ev, (d.role === "base" ? "<div class=\"dim\">pinned baseline</div>" : "") + details(d.r, d.r.entity(d.q.scope, d.q.name), d.withLabel)))
        .on("mousemove", moveTip).on("mouseleave", hideTip),
      update => update,
      exit => exit.transition(t).attr("opacity", 0).remove())
      .attr("class", d => `pt scope-${d.q.scope} level-${d.q.level} role-${d.role}`)
      .attr("data-name", d => d.q.name).attr("data-intensity", d => d.q.intensity).attr("data-ops-per-second", d => d.q.ops_per_second)
      .attr("stroke", colour).attr("stroke-width", 1.5).attr("fill", d => (d.filled ? colour(d) : "#fff"))
      .attr("fill-opacity", d => (d.filled ? 0.85 : 0.6))
      .raise()
      .transition(t).attr("opacity", 1).attr("transform", at)
      .attr("d", d => symbol(SHAPES[d.q.scope], area(d.q.scope, radius(d.q.time_share)))());
    const names = pts.filter(d => d.q.scope === "network" && d.q.level === "dram");
    this.layers.names.selectAll("text").data(names, d => d.key).join("text")
      .attr("font-size", 11).attr("font-weight", 600).attr("stroke", "#fff").attr("stroke-width", 3).attr("paint-order", "stroke")
      .attr("fill", "#111").text(d => (d.role === "base" ? "baseline" : compare ? d.r.label + " network" : "network"))
      .attr("text-anchor", d => (d.role === "base" ? "end" : "start"))
      // Below the point, clear of the roof labels above the roofs; the baseline's to the left.
      .transition(t).attr("x", d => x(d.q.intensity) + (d.role === "base" ? -14 : 14)).attr("y", d => y(d.q.ops_per_second) + (d.role === "base" ? -8 : 24));
  }

  drawArrows(t, x, y, arrows, baseline, cur) {
    if (baseline) {
      const from = findDram(baseline, "network", ["network"]), to = findDram(cur, "network", ["network"]);
      if (from && to) arrows = arrows.concat([{key: "baseline", from, to, cls: "arrow-baseline"}]);
    }
    this.layers.arrows.selectAll("line").data(arrows, a => a.key).join(
      enter => enter.append("line").attr("opacity", 0)
        .attr("x1", a => x(a.from.intensity)).attr("y1", a => y(a.from.ops_per_second))
        .attr("x2", a => x(a.from.intensity)).attr("y2", a => y(a.from.ops_per_second)),
      update => update,
      exit => exit.transition(t).attr("opacity", 0).remove())
      .attr("class", a => a.cls).attr("stroke", a => (a.cls === "arrow" ? "#333" : "#495057"))
      .attr("stroke-width", a => (a.cls === "arrow" ? 1.1 : 2)).attr("stroke-dasharray", a => (a.cls === "arrow" ? null : "5 3"))
      .attr("marker-end", "url(#arrowhead)")
      .transition(t).attr("opacity", a => (a.cls === "arrow" ? 0.45 : 0.9))
      .attr("x1", a => x(a.from.intensity)).attr("y1", a => y(a.from.ops_per_second))
      .attr("x2", a => x(a.to.intensity)).attr("y2", a => y(a.to.ops_per_second));
  }
}
