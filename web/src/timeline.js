// A compact timeline of the units (MAC array, vector unit, DMA channels, DRAM buses): one row per
// unit, one cell per time bin shaded by how busy the unit was. Drag across it to zoom in (the
// server re-bins that window from trace.json); double-click to see the whole run again.
import {axisBottom, scaleLinear, select} from "d3";
import {esc, pct, si} from "./format.js";
import {hideTip, moveTip, showTip} from "./tooltip.js";

const W = 900, M = {l: 110, r: 12, t: 6, b: 26}, ROW = 22;
const COLOURS = {"MAC array": "#1f77b4", "vector unit": "#2ca02c"};
const colourOf = name => COLOURS[name] || (name.startsWith("DRAM") ? "#e8590c" : "#9467bd");

export class TimelineView {
  constructor(holder, onZoom) {
    this.holder = holder;
    this.onZoom = onZoom;
    this.svg = select(holder).append("svg").attr("class", "plot timeline");
    this.note = document.createElement("div");
    this.note.className = "note";
    holder.appendChild(this.note);
  }
  update(tl) {
    const H = M.t + M.b + ROW * tl.tracks.length;
    const svg = this.svg.attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H)
      .attr("data-begin-ps", tl.begin_ps).attr("data-end-ps", tl.end_ps);
    svg.selectAll("*").remove();
    const x = scaleLinear().domain([tl.begin_ps, tl.end_ps]).range([M.l, W - M.r]);
    const cell = (W - M.l - M.r) / tl.bins;
    tl.tracks.forEach((tr, i) => {
      const g = svg.append("g").attr("transform", `translate(0,${M.t + i * ROW})`).attr("class", "track");
      g.append("text").attr("x", M.l - 6).attr("y", ROW / 2 + 4).attr("text-anchor", "end").attr("font-size", 11).text(tr.name);
      g.append("rect").attr("x", M.l).attr("y", 2).attr("width", W - M.l - M.r).attr("height", ROW - 4).attr("fill", "#f1f3f5");
      g.selectAll("rect.bin").data(tr.busy.map((b, k) => ({b, k, op: tr.op[k]})).filter(d => d.b > 0)).join("rect").attr("class", "bin")
        .attr("x", d => M.l + d.k * cell).attr("y", 2).attr("width", cell + 0.4).attr("height", ROW - 4).attr("shape-rendering", "crispEdges")
        .attr("fill", colourOf(tr.name)).attr("fill-opacity", d => 0.15 + 0.85 * d.b)
        .on("mouseenter", (ev, d) => showTip(ev, "<b>" + esc(tr.name) + "</b><div class=\"row\">" + si((tl.begin_ps + d.k * tl.bin_ps) * 1e-12, "s") + " – " +
          si((tl.begin_ps + (d.k + 1) * tl.bin_ps) * 1e-12, "s") + " · busy " + pct(d.b) + "</div>" + (d.op >= 0 ? '<div class="row">mostly ' + esc(tl.ops[d.op]) + "</div>" : "")))
        .on("mousemove", moveTip).on("mouseleave", hideTip);
    });
    svg.append("g").attr("transform", `translate(0,${H - M.b})`).call(axisBottom(x).ticks(8).tickFormat(v => si(v * 1e-12, "s", 3)));
    // Drag to zoom: a rubber band over the rows.
    const band = svg.append("rect").attr("class", "band").attr("y", M.t).attr("height", H - M.t - M.b).attr("fill", "#4c6ef5").attr("fill-opacity", 0.15).attr("width", 0);
    let start = null;
    const px = ev => {
      const box = this.svg.node().getBoundingClientRect();
      return Math.max(M.l, Math.min(W - M.r, (ev.clientX - box.left) * W / box.width));
    };
    svg.on("mousedown", ev => { start = px(ev); band.attr("x", start).attr("width", 0); })
      .on("mousemove", ev => { if (start !== null) { const p = px(ev); band.attr("x", Math.min(start, p)).attr("width", Math.abs(p - start)); } })
      .on("mouseup", ev => {
        if (start === null) return;
        const a = Math.min(start, px(ev)), b = Math.max(start, px(ev));
        start = null;
        if (b - a > 4) this.onZoom(Math.round(x.invert(a)), Math.round(x.invert(b)));
        else band.attr("width", 0);
      })
      .on("dblclick", () => this.onZoom(0, 0));
    this.note.textContent = "Shade: the unit's busy share of each bin (" + si(tl.bin_ps * 1e-12, "s") + "). Drag across the rows to zoom in; double-click for the whole run.";
  }
}
