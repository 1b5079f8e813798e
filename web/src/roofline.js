// The hierarchical roofline, drawn with d3: DRAM and SRAM roofs with their ridge points, compute
// roofs, derated roofs, op / group / network points (DRAM intensity filled, SRAM intensity open;
// with an unfused companion run, its ops open with arrows to where they run fused). The axes stay
// fixed while the page is open (chosen once from the config space, changed only by "Rescale
// axes"), so a change moves the points, not the axes; each point leaves a fading trail of its
// previous positions. Labels are placed so that none overlaps another (labels.js). Marks stand
// where they are drawn, without a transform or an opacity of their own (marks.js says why).
import {axisBottom, axisLeft, format, scaleLog, select} from "d3";
import "d3-transition";
import {BOUND, esc, fixed, legend, si} from "./format.js";
import {LabelPlacer} from "./labels.js";
import {flatAxis, markerPath} from "./marks.js";
import {findDram} from "./model.js";
import {details, hideTip, moveTip, showTip} from "./tooltip.js";

const W = 900, H = 560, M = {l: 74, r: 24, t: 14, b: 50};
const DURATION = 750;
const TRAIL = 4;        // previous positions kept per point
const TOP_LABELS = 8;   // ops and groups labelled, by time share
const radius = share => 3 + 9 * Math.sqrt(Math.max(0, Math.min(1, share || 0)));
// The network's diamond keeps a middle size: at its time share of 1 it would cover the groups.
const markerRadius = q => (q.scope === "network" ? 8 : radius(q.time_share));
const area = (scope, r) => (scope === "op" ? Math.PI * r * r : scope === "group" ? 4 * r * r : 4.5 * r * r);

/** Whole decades around `values` (padded by the factor `pad`). */
export function decades(values, pad) {
  const ok = values.filter(v => v > 0 && isFinite(v));
  if (!ok.length) return [1e-2, 1e4];
  return [10 ** Math.floor(Math.log10(Math.min(...ok) / pad)), 10 ** Math.ceil(Math.log10(Math.max(...ok) * pad))];
}

/** Intensities and performances of a run's roofs and points: what the axes must show. */
export function extent(r) {
  const xs = [], ys = [];
  const comp = r.roofline.roofs.filter(x => x.kind === "compute"), mem = r.roofline.roofs.filter(x => x.kind === "memory");
  for (const c of comp) { ys.push(c.value); for (const m of mem) xs.push(c.value / m.value); }
  for (const p of r.roofline.points) { xs.push(p.intensity); ys.push(p.ops_per_second); }
  return {xs, ys};
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

/** Ridge points: where each memory roof meets each compute roof (ops/byte = peak / bandwidth). */
function ridges(r) {
  const out = [];
  for (const c of r.roofline.roofs.filter(x => x.kind === "compute" && x.value > 0))
    for (const m of r.roofline.roofs.filter(x => x.kind === "memory" && x.value > 0))
      out.push({key: m.name + "|" + c.name, intensity: c.value / m.value, value: c.value, mem: m.name, comp: c.name});
  return out;
}

/** Did runs `a` and `b` run on one hardware config (the resolved config's hash)? */
export function sameHardware(a, b) {
  const ha = a.summary.provenance && a.summary.provenance.config_hash, hb = b.summary.provenance && b.summary.provenance.config_hash;
  return ha && hb ? ha === hb : a.summary.config_name === b.summary.config_name;
}

/**
 * The network point the headline's bound names: at the level of its bound roof (SRAM when the
 * SRAM roof binds, else DRAM), with the roof's name. null without a network point.
 */
export function namedPoint(r) {
  const pts = r.roofline.points.filter(q => q.scope === "network");
  const roof = r.summary.bound_roof;
  const q = pts.find(p => p.level === (roof === "SRAM" ? "sram" : "dram")) || pts[0];
  return q ? {q, roof, level: q.level} : null;
}

const pointAt = q => q.level + "|" + q.intensity + "|" + q.ops_per_second;

/** The places of a run's op points (`all`: its roofline points), for sameAsAnOp. */
const opPlaces = all => new Set(all.filter(o => o.scope === "op").map(pointAt));

/** A group or network point that sits exactly on one of its ops' points (a single-op group) adds nothing. */
function sameAsAnOp(places, q) {
  return q.scope !== "op" && places.has(pointAt(q));
}

export class RooflineView {
  /** `space` (optional): {xs, ys} the axes must show whatever the run (the config space's roofs). */
  constructor(holder, space = null) {
    this.holder = holder;
    this.first = true;
    this.space = space;
    this.domain = null;       // [xr, yr], fixed until "Rescale axes"
    this.rescale = false;
    this.trails = new Map();  // point key -> previous [intensity, ops/s] positions, oldest first
    this.last = new Map();    // point key -> its position at the last update
    this.onHover = () => {};  // (scope, name | null): the page links the table and the timeline
    const controls = document.createElement("div");
    controls.className = "controls";
    holder.appendChild(controls);
    for (const [cls, label] of [["op", "ops"], ["group", "groups"], ["network", "network"], ["sram", "SRAM-level points (ops, groups)"], ["derated", "derated roofs"], ["trail", "trails"]]) {
      const l = document.createElement("label");
      l.innerHTML = '<input type="checkbox" checked> ' + label;
      l.firstChild.addEventListener("change", e => holder.classList.toggle("hide-" + cls, !e.target.checked));
      controls.appendChild(l);
    }
    const button = document.createElement("button");
    button.type = "button";
    button.id = "rescale";
    button.textContent = "Rescale axes";
    button.title = "Fit the axes to this run (they otherwise stay fixed, so a change moves the points, not the axes)";
    button.addEventListener("click", () => { this.rescale = true; if (this.lastArgs) this.update(...this.lastArgs); });
    controls.appendChild(button);
    this.outside = document.createElement("span");
    this.outside.className = "outside warn";
    controls.appendChild(this.outside);
    const svg = select(holder).append("svg").attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H).attr("class", "plot roofline");
    this.svg = svg;
    const defs = svg.append("defs");
    defs.append("clipPath").attr("id", "roof-clip").append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b);
    // An arrow's line fades with stroke-opacity, which its head does not take: a head for each strength.
    for (const [id, o] of [["arrowhead", 0.9], ["arrowhead-faint", 0.45]])
      defs.append("marker").attr("id", id).attr("viewBox", "0 0 10 10").attr("refX", 9).attr("refY", 5)
        .attr("markerWidth", 7).attr("markerHeight", 7).attr("orient", "auto-start-reverse")
        .append("path").attr("d", "M 0 0 L 10 5 L 0 10 z").attr("fill", "#333").attr("fill-opacity", o);
    this.gx = svg.append("g").attr("class", "axis x").attr("transform", `translate(0,${H - M.b})`);
    this.gy = svg.append("g").attr("class", "axis y").attr("transform", `translate(${M.l},0)`);
    svg.append("rect").attr("x", M.l).attr("y", M.t).attr("width", W - M.l - M.r).attr("height", H - M.t - M.b).attr("fill", "none").attr("stroke", "#888");
    svg.append("text").attr("x", (M.l + W - M.r) / 2).attr("y", H - 10).attr("text-anchor", "middle").attr("font-size", 13).text("arithmetic intensity (ops/byte)");
    svg.append("text").attr("transform", `translate(16,${(M.t + H - M.b) / 2}) rotate(-90)`).attr("text-anchor", "middle").attr("font-size", 13).text("performance (ops/s)");
    const body = svg.append("g").attr("clip-path", "url(#roof-clip)");
    // Labels above the points (with a white halo), so a big marker near a roof cannot hide its name.
    this.layers = {roofs: body.append("g"), derated: body.append("g"), ridges: body.append("g"), trails: body.append("g").attr("class", "trail"),
      arrows: body.append("g"), points: body.append("g"), labels: body.append("g").attr("class", "labels")};
    // Label widths from a canvas in the labels' font: measuring an SVG text would lay the page out
    // again at every label, once the plot's points have moved (tens of ms a redraw).
    const family = getComputedStyle(holder).fontFamily, widths = new Map();
    const ctx = document.createElement("canvas").getContext("2d");
    this.placer = new LabelPlacer((text, weight) => {
      const key = (weight || 400) + " " + text;
      if (!widths.has(key)) {
        ctx.font = `${weight || 400} 11px ${family}`;
        widths.set(key, ctx.measureText(text).width);
      }
      return widths.get(key);
    }, {x0: M.l + 2, y0: M.t + 2, x1: W - M.r - 2, y1: H - M.b - 2});
    this.note = document.createElement("div");
    holder.appendChild(this.note);
  }

  /** Fixes the axes: from the config space and the run on first use, from the run alone on "Rescale axes". */
  axes(all) {
    if (this.domain && !this.rescale) return false;
    const xs = [], ys = [];
    for (const r of all) { const e = extent(r); xs.push(...e.xs); ys.push(...e.ys); }
    let xr = decades(xs, 3), yr = decades(ys, 3);
    if (!this.rescale && this.space) {  // the config space brings its own headroom: no padding
      const [sx, sy] = [decades(this.space.xs, 1), decades(this.space.ys, 1)];
      xr = [Math.min(xr[0], sx[0]), Math.max(xr[1], sx[1])];
      yr = [Math.min(yr[0], sy[0]), Math.max(yr[1], sy[1])];
    }
    this.domain = [xr, yr];
    this.rescale = false;
    return true;
  }

  /**
   * runs: [current] or [unfused, current]; arrows: [{from, to}] from runs[0]'s ops to runs[1];
   * baseline: a pinned run (its network point and an arrow to the current one) or null.
   */
  update(runs, arrows, baseline) {
    this.lastArgs = [runs, arrows, baseline];
    hideTip();  // a tooltip of a point that moved or left would stay behind
    const compare = runs.length > 1, cur = runs[runs.length - 1];
    const all = baseline ? runs.concat([baseline]) : runs;
    const rescaled = this.axes(all);
    const [xr, yr] = this.domain;
    const x = scaleLog().domain(xr).range([M.l, W - M.r]), y = scaleLog().domain(yr).range([H - M.b, M.t]);
    this.x = x; this.y = y;
    const t = this.svg.transition().duration(this.first ? 0 : DURATION);
    this.first = false;
    // Resolves when the points stand where they are now (or a newer update took over): what the
    // page and the tests wait on, never a fixed sleep.
    this.done = t.end().catch(() => {});
    if (rescaled) {
      const tick = format("~s");
      const label = v => (Math.abs(Math.log10(v) % 1) < 1e-9 ? tick(v) : "");
      flatAxis(this.gx, axisBottom(x).ticks(8, label));
      flatAxis(this.gy, axisLeft(y).ticks(8, label));
      this.trails.clear();  // old positions mean nothing on new axes
      this.last.clear();
    }
    this.svg.attr("data-x-domain", xr.join(",")).attr("data-y-domain", yr.join(","));

    this.placer.reset();
    // The roofs of every run drawn: the open run's too when it ran on other hardware, so each
    // run's points stand under their own roofs.
    const other = compare && !sameHardware(runs[0], cur) ? runs[0] : null;
    this.named = namedPoint(cur);
    this.drawRoofs(t, x, y, cur, baseline, xr, yr, other);
    this.drawRidges(t, x, y, cur);
    const opPts = compare ? [] : cur.roofline.points.filter(q => q.scope === "op" && q.level === "dram" && q.derated_peak < 0.95 * q.peak);
    this.drawDerated(t, x, y, opPts, cur);
    const pts = this.pointData(runs, baseline);
    this.drawTrails(x, y, pts);
    this.drawPoints(t, x, y, pts);
    this.drawArrows(t, x, y, compare ? arrows.map(a => ({key: a.from + "→" + a.to, from: findDram(runs[0], a.from, ["op", "group", "network"]),
      to: findDram(runs[1], a.to, ["group", "op", "network"]), cls: "arrow"})).filter(a => a.from && a.to) : [], baseline, cur);
    this.drawNames(t, x, y, pts, compare);
    const out = pts.filter(d => !(d.q.intensity >= xr[0] && d.q.intensity <= xr[1] && d.q.ops_per_second >= yr[0] && d.q.ops_per_second <= yr[1])).length;
    this.outside.textContent = out ? " " + out + " point" + (out > 1 ? "s" : "") + " outside the axes: rescale to see " + (out > 1 ? "them" : "it") : "";
    this.holder.dataset.points = String(pts.length);
    const nm = this.named;
    this.note.innerHTML = legend([["compute-bound", BOUND.compute], ["memory-bound", BOUND.memory], ["latency-bound", BOUND.latency]]) +
      '<div class="note">circle = op · square = fused group · diamond (black outline) = network, drawn above the groups · size: share of run time · ' +
      (compare ? "open = " + esc(runs[0].label) + " (DRAM intensity), filled = " + esc(runs[1].label) + " (DRAM intensity), dashed outline = " + esc(runs[1].label) +
        " at SRAM intensity; arrows: each op of " + esc(runs[0].label) + " to where it runs in " + esc(runs[1].label) +
        (sameHardware(runs[0], cur) ? "" : "; grey roofs: " + esc(runs[0].label) + "'s hardware, under which its points stand")
        : "filled = DRAM intensity, open = SRAM intensity (same height: the hierarchical roofline); dashed ticks: an op's derated roof (array shape); dashed line: the network's derated roof") +
      "; dotted line: the network at its two intensities" + (nm && nm.roof ? "; the headline's bound (" + esc(cur.summary.bound) + ", " + esc(nm.roof) + " roof) is judged at the network's " + (nm.level === "sram" ? "SRAM" : "DRAM") + " point, labelled with it, and that roof's label is bold" : "") +
      "; dots on the roofs: ridge points (ops/B where a bandwidth roof meets a compute roof); faded marks: each point's previous positions" +
      (baseline ? "; grey diamond: the pinned baseline's network point, arrow to this run's" : "") + ". The axes stay fixed while the page is open (Rescale axes fits them to this run). Hover a point for its details.</div>";
  }

  drawRoofs(t, x, y, cur, baseline, xr, yr, other) {
    let segs = roofSegments(cur, xr, yr, "cur");
    if (baseline) segs = segs.concat(roofSegments(baseline, xr, yr, "base"));
    if (other) segs = segs.concat(roofSegments(other, xr, yr, "base-other"));
    const coords = s => (s.kind === "memory" ? [x(s.x1), y(s.x1 * s.bw), x(s.x2), y(s.x2 * s.bw)] : [x(s.x1), y(s.value), x(s.x2), y(s.value)]);
    const colour = s => (s.key.startsWith("base") ? "#adb5bd" : s.kind === "memory" ? "#2ca02c" : "#555");
    this.layers.roofs.attr("data-other-roofs", other ? segs.filter(s => s.key.startsWith("base-other")).length : 0);
    this.layers.roofs.selectAll("line").data(segs, s => s.key).join(
      enter => enter.append("line").attr("stroke-width", 2).attr("stroke-opacity", 0),
      update => update,
      exit => exit.transition(t).attr("stroke-opacity", 0).remove())
      .attr("class", s => "roof " + s.kind + (s.key.startsWith("base-other") ? " other" : s.key.startsWith("base") ? " base" : "") + (this.named && s.name === this.named.roof && !s.key.startsWith("base") ? " named" : ""))
      .attr("data-name", s => s.name)
      .attr("stroke", colour).attr("stroke-dasharray", s => (s.key.startsWith("base") ? "6 4" : s.name.includes("+") ? "5 4" : null))
      .transition(t).attr("stroke-opacity", 1)
      .attr("x1", s => coords(s)[0]).attr("y1", s => coords(s)[1]).attr("x2", s => coords(s)[2]).attr("y2", s => coords(s)[3]);
    // Their obstacles first: a baseline's line must not run through a label either.
    for (const s of segs) this.placer.line(...coords(s));
    const angle = -Math.atan2(y(yr[0]) - y(yr[0] * 10), x(xr[0] * 10) - x(xr[0])) * 180 / Math.PI;
    const labels = [];
    // The roof the headline's bound names is labelled first and always (the network's derated
    // roof has its own label, drawNames).
    const named = this.named && this.named.roof;
    const isNamed = s => Boolean(named) && s.name === named;
    const own = segs.filter(s => !s.key.startsWith("base")).sort((a, b) => Number(isNamed(b)) - Number(isNamed(a)));
    for (const s of own) {
      const must = isNamed(s);
      const text = s.label + (must ? " · bounds the network" : "");
      let cands;
      if (s.kind === "compute") {
        cands = [{x: x(s.x2) - 6, y: y(s.value) - 6, anchor: "end"}, {x: x(s.x2) - 6, y: y(s.value) + 14, anchor: "end"},
          {x: x(s.x2) - 160, y: y(s.value) - 6, anchor: "end"}, {x: x(s.x2) - 320, y: y(s.value) - 6, anchor: "end"},
          {x: x(s.x2) - 160, y: y(s.value) + 14, anchor: "end"}];
      } else {
        // Along the roof, low on its slope; tried at a few places.
        cands = [1.6, 4, 10, 25, 0.5, 60].map(f => { const lx = Math.max(s.x1 * f, xr[0] * f); return {x: x(lx), y: y(lx * s.bw) - 6, anchor: "start", rotate: angle}; });
        cands = cands.concat(cands.map(c => ({...c, y: c.y + 18})));
      }
      const p = this.placer.place(text, cands, {ignoreLines: true, weight: must ? 600 : 400}) ||
        (must ? this.placer.place(text, cands, {ignoreLines: true, weight: 600, ignoreBoxes: true}) : null);
      if (p) labels.push({...s, ...p, label: text, rotate: s.kind === "compute" ? 0 : angle, weight: must ? 600 : 400, named: must});
    }
    // Another run's roofs, named once each.
    for (const s of segs.filter(s => s.key.startsWith("base-other") && s.kind === "compute")) {
      const text = s.label + " (" + (other ? other.label : "base") + ")";
      const p = this.placer.place(text, [{x: x(s.x2) - 6, y: y(s.value) - 6, anchor: "end"}, {x: x(s.x2) - 6, y: y(s.value) + 14, anchor: "end"}], {ignoreLines: true});
      if (p) labels.push({...s, ...p, label: text, rotate: 0, other: true});
    }
    this.roofLabels = labels;
  }

  drawRidges(t, x, y, cur) {
    const rs = ridges(cur).filter(r => r.intensity > 0 && isFinite(r.intensity));
    this.layers.ridges.selectAll("circle").data(rs, r => r.key).join("circle").attr("class", "ridge").attr("r", 3.2)
      .attr("fill", "#fff").attr("stroke", "#2ca02c").attr("stroke-width", 1.6)
      .each(function (r) { select(this).selectAll("title").data([0]).join("title").text("ridge point: " + r.mem + " meets " + r.comp + " at " + fixed(r.intensity, 3) + " ops/B"); })
      .transition(t).attr("cx", r => x(r.intensity)).attr("cy", r => y(r.value));
    for (const r of rs) this.placer.box(x(r.intensity) - 4, y(r.value) - 4, 8, 8);
    this.ridgeLabels = rs.map(r => {
      const text = fixed(r.intensity, 2) + " ops/B";
      const p = this.placer.place(text, [{x: x(r.intensity) + 5, y: y(r.value) + 13, anchor: "start"}, {x: x(r.intensity) - 5, y: y(r.value) + 13, anchor: "end"}], {size: 10});
      return p && {...p, key: "ridge|" + r.key, label: text, size: 10, fill: "#2b8a3e"};
    }).filter(Boolean);
  }

  /** Dashed ticks at each derated op roof; a dashed line at the network's (and its label) when it binds. */
  drawDerated(t, x, y, ops, cur) {
    const lines = ops.map(q => ({key: "op|" + q.name, x1: q.intensity / 1.4, x2: q.intensity * 1.4, v: q.derated_peak, bound: q.bound, cls: "derated scope-op"}));
    const net = cur && cur.roofline.points.find(q => q.scope === "network" && q.level === "dram");
    this.networkDerated = null;
    if (net && net.derate_reason) {
      lines.push({key: "network", x1: net.intensity / 30, x2: net.intensity * 100, v: net.derated_peak, bound: net.bound, cls: "derated derated-network scope-network"});
      this.networkDerated = net;
    }
    this.layers.derated.selectAll("line").data(lines, l => l.key).join(
      enter => enter.append("line").attr("stroke-width", 1.5).attr("stroke-dasharray", "4 3"),
      update => update, exit => exit.remove())
      .attr("class", l => l.cls).attr("stroke", l => BOUND[l.bound] || BOUND.none).attr("data-value", l => l.v)
      .transition(t).attr("x1", l => x(l.x1)).attr("x2", l => x(l.x2)).attr("y1", l => y(l.v)).attr("y2", l => y(l.v));
    // Labels keep off the network's derated roof (its own label ignores lines when it must).
    for (const l of lines.filter(l => l.key === "network")) this.placer.line(x(l.x1), y(l.v), x(l.x2), y(l.v));
  }

  pointData(runs, baseline) {
    const compare = runs.length > 1, out = [];
    const cur = runs[runs.length - 1];
    const named = namedPoint(cur);
    runs.forEach((r, i) => {
      const role = compare && i === 0 ? "unfused" : "cur";
      const all = r.roofline.points, places = opPlaces(all);
      for (const q of all) {
        // Beside another run, the open run is drawn at DRAM intensity only; this run's SRAM-level
        // points stay (dashed outline), so the checkbox and the bound they name hold in every mode.
        if (role === "unfused" && q.level !== "dram") continue;
        const isNamed = role === "cur" && named && q === named.q;
        if (!isNamed && sameAsAnOp(places, q)) continue;
        const filled = compare ? i === 1 && q.level === "dram" : q.level === "dram";
        out.push({key: role + "|" + q.scope + "|" + q.name + "|" + q.level, q, r, role, filled, withLabel: compare, named: isNamed,
          dashed: compare && role === "cur" && q.level === "sram"});
      }
    });
    if (baseline) {
      const q = baseline.roofline.points.find(p => p.scope === "network" && p.level === "dram");
      const other = baseline.summary.workload !== cur.summary.workload;
      if (q) out.push({key: "base|network", q, r: baseline, role: "base", filled: true, withLabel: true, other});
    }
    // Big markers first, so small ones stay on top and reachable; the network's points last of
    // all, above every group's square (their tooltips reachable).
    const rank = d => (d.q.scope === "network" ? 1 : 0);
    return out.sort((a, b) => rank(a) - rank(b) || (b.q.time_share || 0) - (a.q.time_share || 0));
  }

  /** The previous positions of each current point, oldest faintest. */
  drawTrails(x, y, pts) {
    const now = new Map();
    for (const d of pts) {
      if (d.role !== "cur" || d.q.level !== "dram") continue;
      const pos = [d.q.intensity, d.q.ops_per_second], prev = this.last.get(d.key);
      const trail = (this.trails.get(d.key) || []).slice();
      if (prev && (prev[0] !== pos[0] || prev[1] !== pos[1])) trail.push(prev);
      while (trail.length > TRAIL) trail.shift();
      if (trail.length) this.trails.set(d.key, trail); else this.trails.delete(d.key);
      now.set(d.key, pos);
    }
    for (const k of [...this.trails.keys()]) if (!now.has(k)) this.trails.delete(k);
    this.last = now;
    const marks = [];
    for (const [key, trail] of this.trails) trail.forEach((p, i) => marks.push({key: key + "|" + i, p, age: trail.length - i, scope: key.split("|")[1]}));
    this.layers.trails.selectAll("circle").data(marks, m => m.key).join("circle")
      .attr("class", m => "trail-mark scope-" + m.scope).attr("r", m => (m.scope === "network" ? 5 : 3))
      .attr("cx", m => x(m.p[0])).attr("cy", m => y(m.p[1])).attr("fill", "#495057").attr("fill-opacity", m => 0.45 / m.age);
    const paths = [...this.trails].map(([key, trail]) => ({key, pts: trail.concat([now.get(key)]), scope: key.split("|")[1]}));
    this.layers.trails.selectAll("path").data(paths, p => p.key).join("path").attr("class", p => "trail-line scope-" + p.scope)
      .attr("fill", "none").attr("stroke", "#868e96").attr("stroke-width", 1).attr("stroke-dasharray", "2 2").attr("stroke-opacity", 0.6)
      .attr("d", p => "M" + p.pts.map(q => x(q[0]).toFixed(1) + "," + y(q[1]).toFixed(1)).join("L"));
  }

  drawPoints(t, x, y, pts) {
    const colour = d => (d.role === "base" ? "#868e96" : BOUND[d.q.bound] || BOUND.none);
    // Where a marker stands and its size: in its path data (marks.js); each node keeps the shape
    // it shows now (__at), from which a newer update moves it on, even mid-way.
    const target = d => ({x: x(d.q.intensity), y: y(d.q.ops_per_second), a: area(d.q.scope, markerRadius(d.q))});
    const fillOpacity = d => (d.filled ? 0.85 : 0.6);
    this.layers.points.selectAll("path.pt").data(pts, d => d.key).join(
      enter => enter.append("path").each(function (d) { this.__at = target(d); })
        .attr("d", function (d) { return markerPath(d.q.scope, this.__at.a, this.__at.x, this.__at.y); })
        .attr("fill-opacity", 0).attr("stroke-opacity", 0),
      update => update,
      exit => exit.transition(t).attr("fill-opacity", 0).attr("stroke-opacity", 0).remove())
      .on("mouseenter", (ev, d) => {
        showTip(ev, (d.role === "base" ? '<div class="dim">pinned baseline' + (d.other ? " (another workload: " + esc(d.r.summary.workload) + ")" : "") + "</div>" : "") +
          details(d.r, d.r.entity(d.q.scope, d.q.name), d.withLabel));
        if (d.role !== "base") this.onHover(d.q.scope, d.q.name);
      })
      .on("mousemove", moveTip).on("mouseleave", () => { hideTip(); this.onHover(null, null); })
      .on("click", (ev, d) => { if (d.role !== "base") this.onHover(d.q.scope, d.q.name, true); })
      .attr("class", d => `pt scope-${d.q.scope} level-${d.q.level} role-${d.role}` + (d.named ? " bound-point" : ""))
      .attr("stroke-dasharray", d => (d.dashed ? "3 2" : null))
      .attr("data-name", d => d.q.name).attr("data-intensity", d => d.q.intensity).attr("data-ops-per-second", d => d.q.ops_per_second)
      .attr("data-x", d => x(d.q.intensity)).attr("data-y", d => y(d.q.ops_per_second))
      .attr("stroke", d => (d.q.scope === "network" && d.role !== "base" ? "#111" : colour(d))).attr("stroke-width", d => (d.q.scope === "network" ? 2 : 1.5)).attr("fill", d => (d.filled ? colour(d) : "#fff"))
      .raise()
      .transition(t).attr("fill-opacity", fillOpacity).attr("stroke-opacity", 1)
      .attrTween("d", function (d) {
        const from = this.__at, to = target(d), scope = d.q.scope;
        return k => {
          const at = {x: from.x + (to.x - from.x) * k, y: from.y + (to.y - from.y) * k, a: from.a + (to.a - from.a) * k};
          this.__at = at;
          return markerPath(scope, at.a, at.x, at.y);
        };
      });
    for (const d of pts) {
      const r = markerRadius(d.q) + 1;
      if (d.q.scope !== "op" || d.q.time_share > 0.02) this.placer.box(x(d.q.intensity) - r, y(d.q.ops_per_second) - r, 2 * r, 2 * r);
    }
  }

  /** Every label of the plot, placed so that none overlaps another: roofs, ridges, network, baseline, top ops. */
  drawNames(t, x, y, pts, compare) {
    const labels = this.roofLabels.map(l => ({...l, fill: l.other ? "#868e96" : l.kind === "memory" ? "#2ca02c" : "#555", cls: "roof-label" + (l.named ? " named-roof" : "")})).concat(this.ridgeLabels.map(l => ({...l, cls: "ridge-label"})));
    // Around the marker, then further out; a label that must be shown (the network's, the
    // baseline's) may at last cross a line, never another label or marker.
    const near = (d, text, weight, must = false) => {
      const px = x(d.q.intensity), py = y(d.q.ops_per_second), r0 = markerRadius(d.q) + 3;
      const cands = [];
      for (const r of must ? [r0, r0 + 14, r0 + 30, r0 + 55, r0 + 85, r0 + 120] : [r0])
        cands.push({x: px + r, y: py + 4, anchor: "start"}, {x: px - r, y: py + 4, anchor: "end"},
          {x: px, y: py - r - 3, anchor: "middle"}, {x: px, y: py + r + 11, anchor: "middle"},
          {x: px + r, y: py - r, anchor: "start"}, {x: px - r, y: py + r + 9, anchor: "end"},
          {x: px - r, y: py - r, anchor: "end"}, {x: px + r, y: py + r + 9, anchor: "start"});
      return this.placer.place(text, cands, {weight}) || (must ? this.placer.place(text, cands, {weight, ignoreLines: true}) : null);
    };
    // The point the headline's bound names first, labelled with that bound; then the other
    // network points.
    const net = pts.filter(d => d.q.scope === "network" && (d.q.level === "dram" || d.named)).sort((a, b) => Number(Boolean(b.named)) - Number(Boolean(a.named)));
    const sm = this.lastArgs[0][this.lastArgs[0].length - 1].summary;
    for (const d of net) {
      const lvl = d.q.level === "sram" ? "SRAM" : "DRAM";
      let text = d.role === "base" ? "baseline" + (d.other ? " (" + d.r.summary.workload + ": another workload)" : "") : (compare ? d.r.label + " network" : "network");
      if (d.named && sm.bound_roof) text += " (" + lvl + " intensity): " + sm.bound + ", " + fixed(100 * sm.fraction_of_bound_roof, 3) + " % of the " + sm.bound_roof + " roof";
      else if (d.role !== "base" && net.some(n => n.named && n.role === d.role && n.q.level !== d.q.level)) text += " (" + lvl + " intensity)";
      const p = near(d, text, 600, true) || (d.named ? this.placer.place(text, [{x: M.l + 8, y: M.t + 16, anchor: "start"}, {x: W - M.r - 8, y: H - M.b - 8, anchor: "end"}], {weight: 600, ignoreLines: true, ignoreBoxes: true}) : null);
      if (p) {
        // A label set further out is tied to its point by a thin leader line.
        const px = x(d.q.intensity), py = y(d.q.ops_per_second);
        const far = Math.hypot(p.x - px, p.y - py) > markerRadius(d.q) + 24;
        labels.push({...p, key: "name|" + d.key, label: text, weight: 600, fill: d.other ? "#c92a2a" : "#111",
          cls: "point-label" + (d.role === "base" ? " base-label" : "") + (d.named ? " bound-label" : ""), leader: far ? [px, py] : null});
      }
    }
    if (this.networkDerated) {
      const q = this.networkDerated, named = this.named && this.named.roof && this.named.roof.startsWith("derated");
      const text = "network's derated roof " + si(q.derated_peak, "ops/s") + (named ? " · bounds the network" : "");
      // Along the line, above or below it, from its right end inwards.
      const cands = [];
      for (const dy of [-5, 13, -18, 26]) for (const f of [100, 30, 12, 5, 1 / 5, 1 / 12, 1 / 30]) cands.push({x: x(q.intensity * f), y: y(q.derated_peak) + dy, anchor: f >= 1 ? "end" : "start"});
      const p = this.placer.place(text, cands, {}) || this.placer.place(text, cands, {ignoreLines: true}) ||
        (named ? this.placer.place(text, cands, {ignoreLines: true, ignoreBoxes: true}) : null);
      if (p) labels.push({...p, key: "derated|network", label: text, weight: named ? 600 : 400, fill: BOUND[q.bound] || "#555",
        cls: "derated-label scope-network" + (named ? " named-roof" : "")});
    }
    const top = pts.filter(d => d.role === "cur" && d.q.level === "dram" && d.q.scope !== "network").slice(0, TOP_LABELS);
    for (const d of top) {
      const p = near(d, d.q.name, 400);
      if (p) labels.push({...p, key: "name|" + d.key, label: d.q.name, fill: "#333", cls: "point-label scope-" + d.q.scope});
    }
    const leaders = labels.filter(l => l.leader).map(l => {
      const w = this.placer.measure(l.label, l.weight) + 2, left = l.anchor === "end" ? l.x - w : l.anchor === "middle" ? l.x - w / 2 : l.x;
      const lx = Math.max(left, Math.min(left + w, l.leader[0])), ly = l.leader[1] < l.y - 8 ? l.y - 10 : l.y + 2;
      return {key: l.key, x1: lx, y1: ly, x2: l.leader[0], y2: l.leader[1]};
    });
    this.layers.labels.selectAll("line.leader").data(leaders, l => l.key).join("line").attr("class", "leader").attr("pointer-events", "none")
      .attr("stroke", "#111").attr("stroke-width", 0.8).attr("stroke-dasharray", "2 2")
      .attr("x1", l => l.x1).attr("y1", l => l.y1).attr("x2", l => l.x2).attr("y2", l => l.y2);
    // A label stands at its x and y; only a label along a sloped roof keeps a transform (its rotation).
    const at = l => `translate(${l.x},${l.y}) rotate(${l.rotate})`;
    const texts = this.layers.labels.selectAll("text").data(labels, l => l.key)
      .join(enter => enter.append("text").attr("x", l => (l.rotate ? null : l.x)).attr("y", l => (l.rotate ? null : l.y)).attr("transform", l => (l.rotate ? at(l) : null)))
      .attr("class", l => l.cls).attr("font-size", l => l.size || 11).attr("font-weight", l => l.weight || 400)
      .attr("stroke", "#fff").attr("stroke-width", 3).attr("paint-order", "stroke").attr("fill", l => l.fill)
      .attr("text-anchor", l => l.anchor)
      .each(function (l) { const e = select(this); e.text(l.label); if (l.def) e.append("title").text(l.def); });
    texts.filter(l => l.rotate).attr("x", null).attr("y", null).transition(t).attr("transform", at);
    texts.filter(l => !l.rotate).attr("transform", null).transition(t).attr("x", l => l.x).attr("y", l => l.y);
  }

  drawArrows(t, x, y, arrows, baseline, cur) {
    // The network's two levels, joined at their common height: the hierarchical roofline's gap.
    const nd = findDram(cur, "network", ["network"]), ns = cur.roofline.points.find(q => q.scope === "network" && q.level === "sram");
    if (nd && ns) arrows = arrows.concat([{key: "levels", from: nd, to: ns, cls: "level-link"}]);
    if (baseline) {
      const from = findDram(baseline, "network", ["network"]), to = findDram(cur, "network", ["network"]);
      if (from && to) arrows = arrows.concat([{key: "baseline", from, to, cls: "arrow-baseline"}]);
    }
    // A new arrow grows from its start, its head put on when it has arrived (a head on a line of
    // no length would point nowhere).
    const head = a => (a.cls === "level-link" ? null : a.cls === "arrow" ? "url(#arrowhead-faint)" : "url(#arrowhead)");
    this.layers.arrows.selectAll("line").data(arrows, a => a.key).join(
      enter => enter.append("line").attr("stroke-opacity", 0)
        .attr("x1", a => x(a.from.intensity)).attr("y1", a => y(a.from.ops_per_second))
        .attr("x2", a => x(a.from.intensity)).attr("y2", a => y(a.from.ops_per_second)),
      update => update,
      exit => exit.transition(t).attr("stroke-opacity", 0).remove())
      .attr("class", a => a.cls + (a.cls === "level-link" ? " scope-network" : "")).attr("stroke", a => (a.cls === "arrow" ? "#333" : "#495057"))
      .attr("stroke-width", a => (a.cls === "arrow" ? 1.1 : a.cls === "level-link" ? 1 : 2))
      .attr("stroke-dasharray", a => (a.cls === "arrow" ? null : a.cls === "level-link" ? "1 3" : "5 3"))
      .attr("marker-end", function (a) { return this.__grown ? head(a) : null; })
      .transition(t).attr("stroke-opacity", a => (a.cls === "arrow" ? 0.45 : 0.9))
      .attr("x1", a => x(a.from.intensity)).attr("y1", a => y(a.from.ops_per_second))
      .attr("x2", a => x(a.to.intensity)).attr("y2", a => y(a.to.ops_per_second))
      .on("end", function (a) {
        this.__grown = true;
        if (head(a)) this.setAttribute("marker-end", head(a));
      });
    for (const a of arrows.filter(a => a.cls === "arrow-baseline")) this.placer.line(x(a.from.intensity), y(a.from.ops_per_second), x(a.to.intensity), y(a.to.ops_per_second));
  }

  /** Highlights the points of one entity (from the table or the timeline); null clears. */
  highlight(scope, name) {
    this.layers.points.selectAll("path.pt").classed("hl", d => name !== null && d.role !== "base" && d.q.name === name && (!scope || d.q.scope === scope));
    if (name !== null) this.layers.points.selectAll("path.pt.hl").raise();
  }
}
