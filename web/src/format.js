// Number formatting and the colour tables shared by every view.
export const BOUND = {compute: "#1f77b4", memory: "#ff7f0e", latency: "#9467bd", none: "#98a2b3"};
export const STALLS = [["compute_s", "work at peak", "#2f9e44"], ["fill_drain_s", "fill/drain", "#74c0fc"],
  ["sram_stall_s", "SRAM stall", "#fcc419"], ["sram_bank_conflict_s", "SRAM bank conflict", "#e67700"],
  ["dma_wait_s", "DMA wait", "#ff8787"], ["dma_sram_wait_s", "DMA SRAM wait", "#c92a2a"],
  ["dependency_s", "dependency", "#b197fc"], ["queueing_s", "queueing", "#adb5bd"]];
export const ENERGY = [["mac_j", "MAC", "#1c7ed6"], ["vector_j", "vector", "#74c0fc"], ["sram_read_j", "SRAM read", "#ffa94d"],
  ["sram_write_j", "SRAM write", "#ffd8a8"], ["dram_j", "DRAM", "#e8590c"],
  ["dram_background_j", "DRAM background", "#868e96"], ["static_j", "static", "#ced4da"]];

// Thousands grouped as toLocaleString("en-US") does, from one formatter: toLocaleString builds
// its own at every call (8 ms of a MobileNetV2 redraw's table).
const GROUPED = new Intl.NumberFormat("en-US", {maximumFractionDigits: 3});

/**
 * `v` with `digits` significant digits and never an exponent: fixed(789.5, 2) = "790",
 * fixed(0.0123, 2) = "0.012" (toPrecision would give "7.9e+2").
 */
export function fixed(v, digits = 3) {
  if (v === 0 || !isFinite(v)) return String(v);
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(v)) + 1e-9));
  return v.toFixed(Math.min(decimals, 20));
}

/** `v` with an SI prefix: si(2.5e9, "ops/s") = "2.50 Gops/s"; si(789.5, "B", 2) = "790 B". */
export function si(v, unit, digits = 3) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  if (v === 0) return "0 " + unit;
  const up = ["", "k", "M", "G", "T", "P", "E"], down = ["", "m", "µ", "n", "p", "f"];
  const e = Math.floor(Math.log10(Math.abs(v)) + 1e-9);
  let i = e >= 0 ? Math.min(6, Math.floor(e / 3)) : -Math.min(5, Math.ceil(-e / 3));
  let m = v / 1000 ** i;
  // Rounding may carry into the next prefix: 999.7 -> "1000" is "1.00 k".
  if (Math.abs(Number(fixed(m, digits))) >= 1000 && i < 6) { i++; m /= 1000; }
  return fixed(m, digits) + " " + (i >= 0 ? up[i] : down[-i]) + unit;
}

/** A plain number with `digits` significant digits and no exponent, thousands kept whole: 1234.5 -> "1235". */
export function num(v, digits = 3) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  return Math.abs(v) >= 10 ** digits ? GROUPED.format(Math.round(v)) : fixed(v, digits);
}
export const pct = (v, d = 1) => (v === null || v === undefined || !isFinite(v) ? "–" : (100 * v).toFixed(d) + " %");
export const int = v => (v === null || v === undefined ? "–" : GROUPED.format(Number(v)));
export const esc = s => String(s).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
export const badge = bound => '<span class="badge" style="background:' + (BOUND[bound] || BOUND.none) + '">' + esc(bound) + "</span>";

/** A stacked horizontal bar of `parts` ([value, label, colour]) out of `total`. */
export function stacked(parts, total, cls = "") {
  let html = '<div class="bar ' + cls + '">';
  for (const [v, label, colour] of parts) {
    if (!(v > 0) || !(total > 0)) continue;
    html += '<span title="' + esc(label) + ": " + pct(v / total) + '" style="width:' + (100 * v / total) + "%;background:" + colour + '"></span>';
  }
  return html + "</div>";
}
export function legend(items) {
  return '<div class="legend">' + items.map(([label, colour]) => '<span><i class="sw" style="background:' + colour + '"></i>' + esc(label) + "</span>").join("") + "</div>";
}
