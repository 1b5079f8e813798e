// The one hover box of the page, and what it says about an op, a group or the network.
import {BOUND, STALLS, badge, esc, int, num, pct, si} from "./format.js";

let tip = null;
function box() {
  if (!tip) { tip = document.createElement("div"); tip.id = "tip"; document.body.appendChild(tip); }
  return tip;
}
export function showTip(ev, html) {
  const t = box();
  t.innerHTML = html;
  t.style.display = "block";
  moveTip(ev);
}
/** The hover box with one line of plain text per entry of `lines` (text from a file the user opened: never HTML). */
export function showTipLines(ev, lines) {
  const t = box();
  t.replaceChildren(...lines.map(text => { const d = document.createElement("div"); d.className = "row"; d.textContent = text; return d; }));
  t.style.display = "block";
  moveTip(ev);
}
export function moveTip(ev) {
  const t = box();
  t.style.left = Math.min(ev.clientX + 14, window.innerWidth - t.offsetWidth - 8) + "px";
  t.style.top = Math.min(ev.clientY + 14, window.innerHeight - t.offsetHeight - 8) + "px";
}
export function hideTip() { box().style.display = "none"; }

/** The hover details of entity `ent` of run `r` (label shown when `withLabel`). */
export function details(r, ent, withLabel) {
  const sm = ent.summary || {}, d = ent.points.dram, sr = ent.points.sram, p = d || sr;
  const rows = [];
  const scopeText = ent.scope === "group" ? "fused group (" + esc(sm.fusion) + ")" : ent.scope;
  rows.push("<b>" + esc(ent.name) + "</b> " + badge(p ? p.bound : sm.bound || "none") +
    (p && p.latency_cause ? ' <span class="dim">dominant loss: ' + esc(p.latency_cause) + "</span>" : ""));
  rows.push('<span class="dim">' + (withLabel ? esc(r.label) + " · " : "") + scopeText + (sm.kind ? " · " + esc(sm.kind) : "") + "</span>");
  if (ent.scope === "group" && sm.members)
    rows.push("members: " + esc(sm.members.slice(0, 8).join(", ")) + (sm.members.length > 8 ? ", … (" + sm.members.length + " in all)" : ""));
  if (ent.scope === "op" && sm.group) rows.push("group: " + esc(sm.group));
  if (p && p.bound_text) rows.push('<span class="bound-text">' + esc(p.bound_text) + "</span>");
  if (p) {
    rows.push("achieved " + si(p.ops_per_second, "ops/s") + " · " + pct(Math.max(d ? d.fraction_of_roof : 0, sr ? sr.fraction_of_roof : 0)) +
      " of roof (binding: " + esc(p.binding_roof) + ")");
    rows.push("intensity: DRAM " + (d ? num(d.intensity) : "–") + " · SRAM " + (sr ? num(sr.intensity) : "–") + " ops/B" +
      ' <span class="dim">(bottleneck: ' + (d && d.bottleneck ? "DRAM" : sr && sr.bottleneck ? "SRAM" : "–") + ")</span>");
    if (p.derated_peak < 0.999 * p.peak)
      rows.push("derated peak " + si(p.derated_peak, "ops/s") + " = " + pct(p.derated_peak / p.peak) + " of " + esc(p.compute_roof) + " (array shape)");
  }
  rows.push("cycles " + int(sm.cycles) + " · " + si(sm.seconds, "s") + (sm.time_share !== undefined ? " · time share " + pct(sm.time_share) : ""));
  rows.push("bytes: DRAM " + si(sm.dram_read_bytes + sm.dram_write_bytes, "B") + " · SRAM " + si(sm.sram_read_bytes + sm.sram_write_bytes, "B") + " · " + si(sm.macs, "MACs"));
  if (sm.energy_j !== null && sm.energy_j !== undefined && sm.energy)
    rows.push("energy " + si(sm.energy_j, "J") + ' <span class="dim">(dynamic ' + si(sm.energy.dynamic_j, "J") + ", standing " + si(sm.energy.standing_j, "J") + ")</span>" +
      (ent.energy ? " · " + si(ent.energy.ops_per_joule, "ops/J") : ""));
  if (sm.stalls && sm.stalls.unit) {
    const st = sm.stalls;
    rows.push('<span class="dim">' + esc(st.unit) + " time:</span> " + STALLS.filter(([k]) => st[k] > 0.005 * st.span_s)
      .map(([k, label]) => esc(label) + " " + pct(st[k] / st.span_s, 0)).join(" · "));
  }
  return rows.map(x => '<div class="row">' + x + "</div>").join("");
}
export {BOUND};
