// Number formatting and the colour tables shared by every view.
export const BOUND = {compute: "#1f77b4", memory: "#ff7f0e", latency: "#9467bd", none: "#98a2b3"};
export const STALLS = [["compute_s", "work at peak", "#2f9e44"], ["fill_drain_s", "fill/drain", "#74c0fc"],
  ["sram_stall_s", "SRAM stall", "#fcc419"], ["sram_bank_conflict_s", "SRAM bank conflict", "#e67700"],
  ["dma_wait_s", "DMA wait", "#ff8787"], ["dependency_s", "dependency", "#b197fc"], ["queueing_s", "queueing", "#adb5bd"]];
export const ENERGY = [["mac_j", "MAC", "#1c7ed6"], ["vector_j", "vector", "#74c0fc"], ["sram_read_j", "SRAM read", "#ffa94d"],
  ["sram_write_j", "SRAM write", "#ffd8a8"], ["dram_j", "DRAM", "#e8590c"],
  ["dram_background_j", "DRAM background", "#868e96"], ["static_j", "static", "#ced4da"]];

/** `v` with an SI prefix: si(2.5e9, "ops/s") = "2.50 Gops/s". */
export function si(v, unit, digits = 3) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  if (v === 0) return "0 " + unit;
  const up = ["", "k", "M", "G", "T", "P", "E"], down = ["", "m", "µ", "n", "p", "f"];
  let a = Math.abs(v), i = 0;
  if (a >= 1) {
    while (a >= 1000 && i < 6) { v /= 1000; a /= 1000; i++; }
    return v.toPrecision(digits) + " " + up[i] + unit;
  }
  while (a < 1 && i < 5) { v *= 1000; a *= 1000; i++; }
  return v.toPrecision(digits) + " " + down[i] + unit;
}
export const pct = (v, d = 1) => (v === null || v === undefined || !isFinite(v) ? "–" : (100 * v).toFixed(d) + " %");
export const int = v => (v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"));
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
