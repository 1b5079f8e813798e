// The page's panels other than the roofline: headline cards, per-op DRAM round-trips and bytes,
// top ops, stall and energy breakdowns, unit utilisation. Each takes the runs it shows.
import {axisTop, scaleBand, scaleLinear, select} from "d3";
import "d3-transition";
import {ENERGY, STALLS, badge, esc, fixed, int, legend, num, pct, si, stacked} from "./format.js";
import {roundTrips} from "./model.js";
import {sameHardware} from "./roofline.js";

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
  // A baseline of another workload did other work: its ratios would mislead, so none are shown.
  const other = base && base.summary.workload !== r.summary.workload ? base.summary.workload : null;
  if (other) base = null;
  const sm = r.summary, mac = r.roof("MAC array"), b = base && base.summary, bl = base && base.label;
  const ops = 2 * sm.macs + sm.vector_ops;
  // One utilisation on the card, its denominator named; the others in its tooltip.
  const hasModel = sm.model_macs !== undefined && sm.model_macs !== null;
  const util = hasModel ? sm.model_mac_utilization : sm.mac_utilization;
  const recomputed = hasModel ? sm.recomputed_macs : 0;
  const utilTip = "MAC utilisation on the model's MACs: " + pct(util) + " = " + int(hasModel ? sm.model_macs : sm.macs) + " MACs / (" + int(sm.cycles) + " cycles × " +
    (mac ? "the array's MAC slots" : "rows × cols") + ")\n" +
    "on the executed MACs (recomputed halos and prologues included): " + pct(sm.mac_utilization) + "\n" +
    "achieved ops / MAC array peak (ops = 2 × MACs + vector ops): " + (mac ? pct(sm.achieved_ops_per_second / mac.value) : "–") + "\n" +
    "achieved ops / the network's compute roof (fraction_of_peak): " + pct(sm.fraction_of_peak);
  const net = r.roofline.points.filter(q => q.scope === "network");
  const at = lvl => net.find(q => q.level === lvl);
  const level = sm.bound_roof === "SRAM" ? "sram" : "dram";
  const iText = lvl => { const q = at(lvl); return q ? num(q.intensity) + " ops/B" : "–"; };
  const cards = [
    ["time", si(sm.seconds, "s"), '<span id="cycles" data-value="' + sm.cycles + '">' + int(sm.cycles) + "</span> cycles", b && delta(b.cycles, sm.cycles, bl)],
    ["achieved", si(sm.achieved_ops_per_second, "ops/s"), "ops = 2 × MACs + vector ops", b && delta(b.achieved_ops_per_second, sm.achieved_ops_per_second, bl, false)],
    ["MAC utilisation", '<span id="mac-util" data-value="' + util + '" title="' + esc(utilTip) + '">' + pct(util) + "</span>",
      '<span title="' + esc(utilTip) + '">of the MAC slots (cycles × rows × cols), on the model\'s ' + si(hasModel ? sm.model_macs : sm.macs, "MACs") + "</span>" +
      (recomputed > 0 ? '<br><span id="recomputed" data-value="' + recomputed + '">+' + si(recomputed, "MACs") + " recomputed (" + pct(recomputed / sm.model_macs) + ")</span>" : ""),
      b && delta(b.model_mac_utilization ?? b.mac_utilization, util, bl, false)],
    ["DRAM traffic", '<span id="dram-bytes" data-value="' + dramBytes(sm) + '">' + si(dramBytes(sm), "B") + "</span>",
      "read " + si(sm.dram_read_bytes, "B") + " · write " + si(sm.dram_write_bytes, "B"), b && delta(dramBytes(b), dramBytes(sm), bl)],
    ["intensity", '<span id="intensity" data-level="' + level + '">' + iText(level) + "</span>",
      (level === "sram" ? "per SRAM byte (the bound's level) · DRAM " + iText("dram") : "per DRAM byte · SRAM " + iText("sram")),
      b && at(level) && (() => { const q = base.roofline.points.find(p => p.scope === "network" && p.level === level); return q && delta(q.intensity, at(level).intensity, bl, false); })()],
    ["bound", badge(sm.bound), sm.bound_roof ? '<span id="bound-roof">' + esc(sm.bound_roof) + " roof · " + pct(sm.fraction_of_bound_roof) + " of it</span> · at " + (level === "sram" ? "SRAM" : "DRAM") + " intensity" : "", ""],
    ["energy", sm.energy_j === null ? "–" : si(sm.energy_j, "J"), sm.energy_j ? si(ops / sm.energy_j, "ops/J") + " · " + si(sm.energy_j / sm.seconds, "W") : "no energy model", b && delta(b.energy_j, sm.energy_j, bl)],
  ];
  el.innerHTML = '<div class="cards">' + cards.map(([k, v, sub, d]) =>
    '<div class="card"><div class="k">' + esc(k) + '</div><div class="v">' + v + '</div><div class="k">' + sub + "</div>" + (d ? '<div class="k">' + d + "</div>" : "") + "</div>").join("") + "</div>" +
    (sm.bound_text ? '<p id="bound-text" class="bound-text"><b>Network bound:</b> ' + esc(sm.bound_text) + "</p>" : "") +
    (other ? '<p class="warn" id="baseline-other">The pinned baseline ran another workload (' + esc(other) + ", not " + esc(sm.workload) + "): no ratios are shown, they would compare different work.</p>" : "") +
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
      ? esc(a.label === "unfused" ? "Unfused" : a.label) + ": <b>" + ta.count + "</b> ops write their output to DRAM (" + si(ta.bytes, "B") + "), read back by the next op. " +
        esc(b.label) + ': <b id="round-trips" data-value="' + tb.count + '">' + tb.count + "</b> (" + si(tb.bytes, "B") + "). " +
        (sameHardware(a, b) ? "Fusion" : a.summary.fusion === b.summary.fusion ? "The hardware" : "The hardware and fusion together") + " removed " +
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

/**
 * npusim compare's per-group table (compare.json "groups"): for each group of the second run,
 * the time its ops took in the first and in the second run, what that saved, with a bar, and
 * their DRAM bytes; sorted by time saved, as `npusim compare` prints it.
 */
export function fusionSavedPanel(el, groups, a, b) {
  // What the pair's difference is: fusion (one hardware config), the hardware (one policy), or
  // both, which no per-group table can split.
  const hw = !sameHardware(a, b), fu = a.summary.fusion !== b.summary.fusion;
  const what = hw && fu ? "both" : hw ? "hardware" : "fusion";
  const title = what === "fusion" ? "What fusion saved, per group" : what === "hardware" ? "What the hardware changed, per group" : "What changed (hardware and fusion), per group";
  const h2 = el.parentElement && el.parentElement.querySelector("h2");
  if (h2) h2.textContent = title + ": " + b.label + " against " + a.label;
  el.dataset.what = what;
  if (!groups) { el.innerHTML = '<p class="note">No per-group figures for this pair in the report\'s data.</p>'; return; }
  const saved = g => g.a.seconds - g.b.seconds;
  const rows = groups.slice().sort((x, y) => saved(y) - saved(x));
  const max = Math.max(1e-30, ...rows.map(g => Math.abs(saved(g))));
  const total = rows.reduce((s, g) => s + saved(g), 0);
  let t = '<div class="layer-scroll"><table class="fusion-saved"><thead><tr><th class="l">group</th><th class="l">fusion</th><th>ops</th><th>' + esc(a.label) + "</th><th>" + esc(b.label) +
    '</th><th class="l saved-col">time saved</th><th>speed-up</th><th>DRAM ' + esc(a.label) + "</th><th>DRAM " + esc(b.label) + '</th><th class="l bound-col">bound</th></tr></thead><tbody>';
  for (const g of rows) {
    const v = saved(g), w = (100 * Math.abs(v) / max).toFixed(1);
    t += '<tr data-name="' + esc(g.group) + '"><td class="l name" title="' + esc(g.group) + '">' + esc(g.group) + '</td><td class="l what" title="' + esc(g.fusion) + '">' + esc(g.fusion) +
      "</td><td>" + g.ops + "</td><td>" + si(g.a.seconds, "s") + "</td><td>" + si(g.b.seconds, "s") +
      '</td><td class="l">' + (v >= 0 ? "" : "−") + si(Math.abs(v), "s") + '<span class="saved-bar ' + (v >= 0 ? "good" : "bad") + '" style="width:' + (0.55 * w).toFixed(1) + '%"></span>' +
      "</td><td>" + (g.speedup > 0 ? num(g.speedup) + "×" : "–") + "</td><td>" + si(g.a.dram_bytes, "B") + "</td><td>" + si(g.b.dram_bytes, "B") +
      '</td><td class="l" title="' + esc(g.a_bound + " → " + g.b_bound) + '">' + esc(g.a_bound) + " → " + esc(g.b_bound) + "</td></tr>";
  }
  const warn = what === "both" ? '<p class="warn" id="saved-both">' + esc(b.label) + " runs on other hardware (" + esc(b.summary.config_name) + ") and under another policy (" + esc(b.summary.fusion) +
    ") than " + esc(a.label) + " (" + esc(a.summary.config_name) + ", " + esc(a.summary.fusion) + "): the time saved below is the hardware's and fusion's together, not fusion's. Pick a base of the same config to see what fusion saved.</p>" :
    what === "hardware" ? '<p class="note">Both runs under ' + esc(b.summary.fusion) + ": the differences are the hardware's (" + esc(a.summary.config_name) + " → " + esc(b.summary.config_name) + ").</p>" : "";
  el.innerHTML = warn + t + "</tbody></table></div>" +
    '<p class="note">Per group of ' + esc(b.label) + ": the time its ops took in each run (the union of their commands' intervals), what " + esc(b.label) +
    " saved (bar: share of the largest saving; red: slower), the speed-up and DRAM bytes, as <code>npusim compare</code> prints them. In all: " +
    si(Math.abs(total), "s") + (total >= 0 ? " saved" : " lost") + " over " + rows.length + " groups (group times overlap, so this need not equal the run's difference).</p>";
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
 * A reason with its byte counts in binary units: "needs 1572864 B of 1048576" -> "needs 1.50 MiB
 * (1,572,864 B) of 1.00 MiB (1,048,576 B)". A number is a byte count when " B" or "bytes" follows it,
 * or when it follows "needs", "of", "over by", "SRAM" or "capacity" and is 1024 or more.
 */
export function withByteUnits(text) {
  const bytes = n => { const v = Number(n); return v < 1024 ? v + " B" : mib(v) + " (" + v.toLocaleString("en-US") + " B)"; };
  return String(text).replace(/\b(\d{4,})( ?(?:B|bytes)\b)/g, (m, n) => bytes(n))
    .replace(/\b(needs|of|over by|SRAM|capacity|holds|leaves|left) (\d{4,})\b(?! ?(?:B\b|bytes|KiB|MiB|rows|cols|columns|channels|ops|tokens))/g, (m, w, n) => w + " " + bytes(n));
}
function mib(v) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return fixed(v, 3) + " " + units[i];
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
    shown.map(([a, b]) => '<tr><td class="l">' + esc(a.name) + '</td><td class="l">' + esc(b.name) + '</td><td class="l reason" title="' + esc(a.not_fused) + '" data-raw="' + esc(a.not_fused) + '">' + esc(withByteUnits(a.not_fused)) + "</td></tr>").join("") +
    "</table>" + (rows.length > shown.length ? '<p class="note">The first ' + shown.length + " of " + rows.length + " boundaries.</p>" : "") +
    '<div class="note">The reason of each boundary in schedule.json\'s not_fused: the policy, capacity (bytes needed and over), a branch, no traffic saved, a dataflow conflict, and why the tile region before it ended. Definitions: docs/scheduling.md.</div>';
}
