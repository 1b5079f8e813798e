// The page's panels other than the roofline: headline cards, per-op DRAM round-trips and bytes,
// top ops, stall and energy breakdowns, unit utilisation. Each takes the runs it shows.
import {axisTop, scaleBand, scaleLinear, select} from "d3";
import "d3-transition";
import {ENERGY, STALLS, badge, esc, int, legend, pct, si, stacked} from "./format.js";
import {roundTrips} from "./model.js";

const dramBytes = s => s.dram_read_bytes + s.dram_write_bytes;

/** A ratio of b to a as text ("0.82×") with the sign of the change coloured. */
function delta(a, b, label, lowerIsBetter = true) {
  if (!(a > 0) || b === null || b === undefined) return "";
  const r = b / a;
  if (Math.abs(r - 1) < 5e-4) return '<span class="delta">= ' + esc(label) + "</span>";
  const good = lowerIsBetter ? r < 1 : r > 1;
  return '<span class="delta ' + (good ? "good" : "bad") + '">' + r.toFixed(3) + "× " + esc(label) + "</span>";
}

/** The headline figures of `r`; with `base`, each with its ratio to the baseline. */
export function headline(el, r, base) {
  const sm = r.summary, mac = r.roof("MAC array"), b = base && base.summary, bl = base && base.label;
  const ops = 2 * sm.macs + sm.vector_ops;
  const cards = [
    ["time", si(sm.seconds, "s"), '<span id="cycles" data-value="' + sm.cycles + '">' + int(sm.cycles) + "</span> cycles", b && delta(b.cycles, sm.cycles, bl)],
    ["achieved", si(sm.achieved_ops_per_second, "ops/s"), pct(sm.achieved_ops_per_second / mac.value) + " of the MAC peak", b && delta(b.achieved_ops_per_second, sm.achieved_ops_per_second, bl, false)],
    ["MAC utilisation", pct(sm.mac_utilization), si(sm.macs, "MACs"), b && delta(b.mac_utilization, sm.mac_utilization, bl, false)],
    ["DRAM traffic", '<span id="dram-bytes" data-value="' + dramBytes(sm) + '">' + si(dramBytes(sm), "B") + "</span>",
      "read " + si(sm.dram_read_bytes, "B") + " · write " + si(sm.dram_write_bytes, "B"), b && delta(dramBytes(b), dramBytes(sm), bl)],
    ["intensity", sm.arithmetic_intensity === null ? "–" : sm.arithmetic_intensity.toFixed(1) + " ops/B", "per DRAM byte", b && delta(b.arithmetic_intensity, sm.arithmetic_intensity, bl, false)],
    ["bound", badge(sm.bound), sm.latency_cause ? "dominant loss: " + esc(sm.latency_cause) : "", ""],
    ["energy", sm.energy_j === null ? "–" : si(sm.energy_j, "J"), sm.energy_j ? si(ops / sm.energy_j, "ops/J") + " · " + si(sm.energy_j / sm.seconds, "W") : "no energy model", b && delta(b.energy_j, sm.energy_j, bl)],
  ];
  el.innerHTML = '<div class="cards">' + cards.map(([k, v, sub, d]) =>
    '<div class="card"><div class="k">' + esc(k) + '</div><div class="v">' + v + '</div><div class="k">' + sub + "</div>" + (d ? '<div class="k">' + d + "</div>" : "") + "</div>").join("") + "</div>" +
    (r.roofline.violations.length ? '<p class="warn">Points above their roof (a model or counting error): ' + r.roofline.violations.map(esc).join("<br>") + "</p>" : "");
}

/**
 * Per-op DRAM bytes, unfused against fused (the seed's point: what fusion removed), and the
 * DRAM round-trips of each run. `unfused` may be null (the run is itself unfused).
 */
export class BytesView {
  constructor(holder) {
    this.holder = holder;
    this.text = document.createElement("div");
    holder.appendChild(this.text);
    this.svg = select(holder).append("svg").attr("class", "plot bytes");
    this.first = true;
  }
  update(cur, unfused) {
    const a = unfused || cur, b = unfused ? cur : null;
    const ta = roundTrips(a), tb = b && roundTrips(b);
    this.text.innerHTML = "<p>" + (b
      ? "Unfused: <b>" + ta.count + "</b> ops write their output to DRAM (" + si(ta.bytes, "B") + "), read back by the next op. " +
        esc(b.label) + ': <b id="round-trips" data-value="' + tb.count + '">' + tb.count + "</b> (" + si(tb.bytes, "B") + "). Fusion removed " +
        (ta.count - tb.count) + " DRAM round-trips and " + si(dramBytes(a.summary) - dramBytes(b.summary), "B") + " of DRAM traffic (" +
        pct(1 - dramBytes(b.summary) / dramBytes(a.summary)) + ")."
      : '<b id="round-trips" data-value="' + ta.count + '">' + ta.count + "</b> ops write their output to DRAM (" + si(ta.bytes, "B") + ")" +
        (a.summary.fusion === "none" ? "; every intermediate tensor makes a DRAM round-trip. Choose a fusion policy to see which ones fusion keeps in SRAM."
          : " under fusion " + esc(a.summary.fusion) + "; `npusim compare` or the live page (`npusim serve`) set it against the unfused run.")) + "</p>";
    const fusedOf = b ? new Map(b.summary.ops.map(o => [o.name, o])) : new Map();
    const rows = a.summary.ops.filter(o => dramBytes(o) > 0).sort((p, q) => dramBytes(q) - dramBytes(p)).slice(0, 24)
      .map(o => ({name: o.name, unfused: dramBytes(o), fused: b ? dramBytes(fusedOf.get(o.name) || {dram_read_bytes: 0, dram_write_bytes: 0}) : null,
        trip: o.dram_write_bytes > 0, tripFused: b ? (fusedOf.get(o.name) || {}).dram_write_bytes > 0 : null}));
    const W = 900, rowH = 18, M = {l: 170, r: 90, t: 28, b: 8}, H = M.t + M.b + rowH * Math.max(1, rows.length);
    const x = scaleLinear().domain([0, Math.max(1, ...rows.map(r => r.unfused), ...rows.map(r => r.fused || 0))]).range([M.l, W - M.r]);
    const yb = scaleBand().domain(rows.map(r => r.name)).range([M.t, H - M.b]).padding(0.18);
    const svg = this.svg.attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H);
    const t = svg.transition().duration(this.first ? 0 : 600);
    this.first = false;
    svg.selectAll("g.axis").data([0]).join("g").attr("class", "axis").attr("transform", `translate(0,${M.t})`)
      .transition(t).call(axisTop(x).ticks(6).tickFormat(v => si(v, "B", 2)));
    const g = svg.selectAll("g.rows").data([0]).join("g").attr("class", "rows");
    const row = g.selectAll("g.row").data(rows, r => r.name).join(enter => {
      const e = enter.append("g").attr("class", "row").attr("transform", r => `translate(0,${yb(r.name)})`);
      e.append("text").attr("class", "name").attr("x", M.l - 6).attr("text-anchor", "end").attr("font-size", 11);
      e.append("rect").attr("class", "unfused").attr("fill", "#adb5bd").attr("x", M.l);
      e.append("rect").attr("class", "fused").attr("fill", "#4c6ef5").attr("x", M.l);
      e.append("text").attr("class", "val").attr("font-size", 11);
      return e;
    });
    row.transition(t).attr("transform", r => `translate(0,${yb(r.name)})`);
    const bh = yb.bandwidth();
    row.select("text.name").attr("y", bh / 2 + 4).text(r => r.name);
    row.select("rect.unfused").attr("height", b ? bh / 2 : bh).transition(t).attr("width", r => x(r.unfused) - M.l);
    row.select("rect.fused").attr("y", bh / 2).attr("height", b ? bh / 2 : 0).transition(t).attr("width", r => (b ? Math.max(0, x(r.fused) - M.l) : 0));
    row.select("text.val").attr("y", bh / 2 + 4).text(r => si(r.unfused, "B", 2) + (b ? " → " + si(r.fused, "B", 2) : ""))
      .transition(t).attr("x", r => x(Math.max(r.unfused, r.fused || 0)) + 6);
    this.holder.querySelector(".legend-holder")?.remove();
    const l = document.createElement("div");
    l.className = "legend-holder";
    l.innerHTML = legend(b ? [["unfused", "#adb5bd"], [b.label, "#4c6ef5"]] : [[a.summary.fusion === "none" ? "unfused" : "fusion " + a.summary.fusion, "#adb5bd"]]) +
      '<div class="note">The 24 ops that move the most DRAM bytes' + (b ? " unfused" : "") + ' (read + write of their commands). A DRAM round-trip: an op whose output is written to DRAM and read back by its consumer; inside a fused group the output stays in SRAM.</div>';
    this.holder.appendChild(l);
  }
}

function bestFraction(ent) {
  const d = ent && ent.points.dram, sr = ent && ent.points.sram;
  return Math.max(d ? d.fraction_of_roof : 0, sr ? sr.fraction_of_roof : 0) || null;
}

function topTable(r, list, scope, n, title) {
  const rows = list.slice().sort((a, b) => b.time_share - a.time_share).slice(0, n);
  const maxShare = Math.max(...rows.map(x => x.time_share), 1e-9);
  let t = (title ? "<h3>" + esc(title) + "</h3>" : "") + '<table class="top-' + scope + '"><tr><th>#</th><th class="l">' + scope + '</th><th class="l">' + (scope === "op" ? "kind" : "members") +
    '</th><th class="l">time share</th><th>cycles (span)</th><th class="l">bound</th><th>% of roof</th><th>intensity</th><th>DRAM</th><th>energy</th><th class="l">where the time went</th></tr>';
  rows.forEach((o, i) => {
    const ent = r.entity(scope, o.name), st = o.stalls;
    const what = scope === "op" ? esc(o.kind) : esc(o.members.length > 3 ? o.members.slice(0, 3).join(", ") + ", … (" + o.members.length + ")" : o.members.join(", "));
    t += "<tr><td>" + (i + 1) + '</td><td class="l">' + esc(o.name) + '</td><td class="l clip" title="' + esc(scope === "op" ? o.kind : o.members.join(", ")) + '">' + what +
      '</td><td class="l"><span class="share" style="width:' + (60 * o.time_share / maxShare).toFixed(1) + 'px"></span>' + pct(o.time_share) + "</td><td>" + int(o.cycles) +
      '</td><td class="l">' + badge(o.bound) + (o.latency_cause ? " " + esc(o.latency_cause) : "") + "</td><td>" + pct(bestFraction(ent)) + "</td><td>" +
      (o.arithmetic_intensity === null ? "–" : o.arithmetic_intensity.toPrecision(3)) + "</td><td>" + si(dramBytes(o), "B") +
      "</td><td>" + (o.energy_j === null ? "–" : si(o.energy_j, "J")) + "</td><td>" + (st && st.unit ? stacked(STALLS.map(([k, l, c]) => [st[k], l, c]), st.span_s) : "") + "</td></tr>";
  });
  return t + "</table>";
}

export function topOps(el, r) {
  let html = topTable(r, r.summary.ops.filter(o => o.time_share > 0), "op", 15, "");
  const fused = r.summary.groups.filter(g => g.members.length > 1 && g.time_share > 0);
  if (fused.length) html += topTable(r, fused, "group", 8, "top fused groups by time");
  el.innerHTML = html + '<div class="note">Time share: each instant of the run shared equally among the ops with a command in flight (it sums to 100 %); cycles: the op\'s span, first command begin to last end (spans overlap). Latency-bound: below ' +
    pct(r.roofline.latency_bound_fraction, 0) + " of the binding roof.</div>";
}

export function stallPanel(el, r) {
  const st = r.summary.stalls;
  el.innerHTML = (!st || !st.unit ? "<p>No compute commands.</p>" :
    "<h3>the " + esc(st.unit) + " over the whole run (" + si(st.span_s, "s") + ")</h3>" + stacked(STALLS.map(([k, l, c]) => [st[k], l, c]), st.span_s, "wide") +
    '<table style="margin-top:6px">' + STALLS.map(([k, l, c]) => '<tr><td class="l"><i class="sw" style="background:' + c + '"></i>' + esc(l) + "</td><td>" + si(st[k], "s") + "</td><td>" + pct(st[k] / st.span_s) + "</td></tr>").join("") + "</table>") +
    '<div class="note">The critical unit\'s time, split so the parts add up to the span: work at peak, fill/drain (fold pipeline fill and drain, rows or columns the shape leaves idle), SRAM stall, SRAM bank conflict, DMA wait, dependency, queueing. Definitions: docs/outputs.md.</div>';
}

export function energyPanel(el, r) {
  const e = r.summary.energy;
  if (!e) { el.innerHTML = '<p class="note">No energy model in this run\'s config (npu.energy).</p>'; return; }
  const topOpsByEnergy = r.summary.ops.filter(o => o.energy_j).sort((a, b) => b.energy_j - a.energy_j).slice(0, 8);
  el.innerHTML = "<h3>" + si(e.total_j, "J") + " in " + si(r.summary.seconds, "s") + " (average " + si(e.total_j / r.summary.seconds, "W") + ")</h3>" +
    stacked(ENERGY.map(([k, l, c]) => [e[k], l, c]), e.total_j, "wide") + legend(ENERGY.map(([k, l, c]) => [l + " " + pct(e[k] / e.total_j), c])) +
    '<table><tr><th class="l">op (by energy)</th><th>energy</th><th>share</th><th class="l">components</th></tr>' +
    topOpsByEnergy.map(o => '<tr><td class="l">' + esc(o.name) + "</td><td>" + si(o.energy_j, "J") + "</td><td>" + pct(o.energy_j / e.total_j) + "</td><td>" +
      stacked(ENERGY.map(([k, l, c]) => [o.energy[k], l, c]), o.energy_j) + "</td></tr>").join("") + "</table>" +
    '<div class="note">Dynamic energy counts events (MACs, vector ops, SRAM and DRAM bytes); standing energy (static, DRAM background) is power × time, shared among ops by their share of wall time. Model: docs/energy.md.</div>';
}

export function unitPanel(el, r) {
  let t = '<table><tr><th class="l">unit</th><th class="l">busy</th><th></th><th>commands</th></tr>';
  for (const u of r.summary.units_busy)
    t += '<tr><td class="l">' + esc(u.name) + '</td><td class="l">' + stacked([[u.busy_fraction, "busy", "#4c6ef5"], [1 - u.busy_fraction, "idle", "#edf0f3"]], 1) + "</td><td>" + pct(u.busy_fraction) + "</td><td>" + int(u.commands) + "</td></tr>";
  el.innerHTML = t + '</table><div class="note">Busy: the sum of the unit\'s command durations over the run\'s time.</div>';
}

/**
 * For each boundary between two groups in run order, why they are two groups (the plan's reason:
 * policy, capacity with the bytes, a branch, where the tile region ended). Summaries written
 * before the reasons existed have none: the panel says so.
 */
export function notFusedPanel(el, r) {
  const groups = r.summary.groups;
  const rows = groups.slice(0, -1).map((g, i) => [g, groups[i + 1]]).filter(([g]) => g.not_fused);
  if (!rows.length) {
    el.innerHTML = "<p>" + (groups.length > 1 ? "No boundary reasons in this run's summary." : "One group: nothing left unfused.") + "</p>";
    return;
  }
  const shown = rows.slice(0, 200);
  el.innerHTML = '<table class="not-fused"><tr><th class="l">group</th><th class="l">next group</th><th class="l">why not one group</th></tr>' +
    shown.map(([a, b]) => '<tr><td class="l">' + esc(a.name) + '</td><td class="l">' + esc(b.name) + '</td><td class="l reason">' + esc(a.not_fused) + "</td></tr>").join("") +
    "</table>" + (rows.length > shown.length ? '<p class="note">The first ' + shown.length + " of " + rows.length + " boundaries.</p>" : "") +
    '<div class="note">The reason of each boundary in schedule.json\'s not_fused: the policy, capacity (bytes needed and over), a branch, no traffic saved, a dataflow conflict, and why the tile region before it ended. Definitions: docs/scheduling.md.</div>';
}
