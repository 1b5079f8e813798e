// A compact timeline of the units (MAC array, vector unit, DMA channels, DRAM buses): one row per
// unit, one cell per time bin shaded by how busy the unit was, the op that kept it busiest named
// where it ran long enough for its name to fit, and the DRAM bandwidth over time below. On the
// live page, drag across it to zoom in (the server re-bins that window from trace.json);
// double-click to see the whole run again.
import {axisBottom, axisRight, scaleLinear, select} from "d3";
import {esc, pct, si} from "./format.js";
import {hideTip, moveTip, showTip} from "./tooltip.js";

const W = 900, M = {l: 110, r: 12, t: 6, b: 26}, ROW = 22, BW_H = 60;
const COLOURS = {"MAC array": "#1f77b4", "vector unit": "#2ca02c"};
const colourOf = name => COLOURS[name] || (name.startsWith("DRAM") ? "#e8590c" : "#9467bd");
const CHAR_PX = 6;  // a generous width of one character at 10 px, so a name that is drawn fits

/** Runs of consecutive bins kept busiest by the same op: [{op, from, to}] (bin indices, `to` exclusive). */
function opRuns(track) {
  const runs = [];
  for (let k = 0; k < track.op.length; k++) {
    const op = track.op[k];
    if (op < 0) continue;
    const last = runs[runs.length - 1];
    if (last && last.op === op && last.to === k) last.to = k + 1;
    else runs.push({op, from: k, to: k + 1});
  }
  return runs;
}

export class TimelineView {
  /** `onZoom(begin_ps, end_ps)` (live page) asks for a window; null: a fixed timeline (report.html). */
  constructor(holder, onZoom) {
    this.holder = holder;
    this.onZoom = onZoom;
    this.onHover = () => {};
    this.svg = select(holder).append("svg").attr("class", "plot timeline" + (onZoom ? " zoomable" : ""));
    this.note = document.createElement("div");
    this.note.className = "note";
    holder.appendChild(this.note);
    this.marked = null;
  }

  /** `dramBandwidth`: the DRAM roof (bytes/s over all channels), for the bandwidth row. */
  update(tl, dramBandwidth) {
    this.tl = tl;
    const dram = tl.tracks.filter(t => t.name.startsWith("DRAM"));
    const units = tl.tracks;
    const bwTop = M.t + ROW * units.length + 8;
    const H = bwTop + (dram.length && dramBandwidth ? BW_H + 6 : 0) + M.b;
    const svg = this.svg.attr("viewBox", `0 0 ${W} ${H}`).attr("width", W).attr("height", H)
      .attr("data-begin-ps", tl.begin_ps).attr("data-end-ps", tl.end_ps);
    svg.selectAll("*").remove();
    const x = scaleLinear().domain([tl.begin_ps, tl.end_ps]).range([M.l, W - M.r]);
    const cell = (W - M.l - M.r) / tl.bins;
    units.forEach((tr, i) => {
      const g = svg.append("g").attr("transform", `translate(0,${M.t + i * ROW})`).attr("class", "track").attr("data-track", tr.name);
      g.append("text").attr("x", M.l - 6).attr("y", ROW / 2 + 4).attr("text-anchor", "end").attr("font-size", 11).text(tr.name);
      g.append("rect").attr("x", M.l).attr("y", 2).attr("width", W - M.l - M.r).attr("height", ROW - 4).attr("fill", "#f1f3f5");
      g.selectAll("rect.bin").data(tr.busy.map((b, k) => ({b, k, op: tr.op[k]})).filter(d => d.b > 0)).join("rect").attr("class", "bin")
        .attr("data-op", d => (d.op >= 0 ? tl.ops[d.op] : ""))
        .attr("x", d => M.l + d.k * cell).attr("y", 2).attr("width", cell + 0.4).attr("height", ROW - 4).attr("shape-rendering", "crispEdges")
        .attr("fill", colourOf(tr.name)).attr("fill-opacity", d => 0.15 + 0.85 * d.b)
        .on("mouseenter", (ev, d) => {
          showTip(ev, "<b>" + esc(tr.name) + "</b><div class=\"row\">" + si((tl.begin_ps + d.k * tl.bin_ps) * 1e-12, "s") + " – " +
            si((tl.begin_ps + (d.k + 1) * tl.bin_ps) * 1e-12, "s") + " · busy " + pct(d.b) + "</div>" + (d.op >= 0 ? '<div class="row">mostly ' + esc(tl.ops[d.op]) + "</div>" : ""));
          if (d.op >= 0) this.onHover("op", tl.ops[d.op]);
        })
        .on("mousemove", moveTip).on("mouseleave", () => { hideTip(); this.onHover(null, null); })
        .on("click", (ev, d) => { if (d.op >= 0) this.onHover("op", tl.ops[d.op], true); });
      // Op names on the compute and DMA tracks, where a run of bins is wide enough.
      if (!tr.name.startsWith("DRAM")) {
        const named = opRuns(tr).filter(r => (r.to - r.from) * cell >= CHAR_PX * Math.min(tl.ops[r.op].length, 4) + 6);
        g.selectAll("text.opname").data(named).join("text").attr("class", "opname").attr("font-size", 10).attr("pointer-events", "none")
          .attr("x", r => M.l + r.from * cell + 3).attr("y", ROW / 2 + 4).attr("fill", "#fff").attr("stroke", "#1f2328").attr("stroke-width", 2.2).attr("paint-order", "stroke")
          .text(r => {
            const name = tl.ops[r.op], room = Math.floor(((r.to - r.from) * cell - 6) / CHAR_PX);
            return name.length <= room ? name : name.slice(0, Math.max(1, room - 1)) + "…";
          });
      }
    });
    if (dram.length && dramBandwidth) this.bandwidthRow(svg, x, cell, dram, dramBandwidth, bwTop);
    svg.append("g").attr("transform", `translate(0,${H - M.b})`).call(axisBottom(x).ticks(8).tickFormat(v => si(v * 1e-12, "s", 3)));
    if (this.onZoom) this.zoomable(svg, x, H);
    this.note.textContent = "Shade: the unit's busy share of each bin (" + si(tl.bin_ps * 1e-12, "s") + "); names: the op that kept the unit busiest" +
      (dram.length && dramBandwidth ? "; DRAM bandwidth: data on the buses per bin (busy share × the channel's peak " + si(dramBandwidth / dram.length, "B/s") + ")" : "") +
      ". Hover a bin to find its op in the table and on the roofline" + (this.onZoom ? "; drag across the rows to zoom in, double-click for the whole run." : ".");
    if (this.marked) this.highlight(this.marked);
  }

  /** DRAM bandwidth over time: the buses' busy share times each channel's peak, summed over channels. */
  bandwidthRow(svg, x, cell, dram, dramBandwidth, top) {
    const perChannel = dramBandwidth / dram.length, bins = dram[0].busy.length;
    const bw = Array.from({length: bins}, (_, k) => dram.reduce((s, t) => s + t.busy[k] * perChannel, 0));
    const y = scaleLinear().domain([0, dramBandwidth]).range([top + BW_H, top]);
    const g = svg.append("g").attr("class", "dram-bandwidth");
    g.append("text").attr("x", M.l - 6).attr("y", top + BW_H / 2 - 2).attr("text-anchor", "end").attr("font-size", 11).text("DRAM bandwidth");
    g.append("rect").attr("x", M.l).attr("y", top).attr("width", W - M.l - M.r).attr("height", BW_H).attr("fill", "#fff4e6");
    let d = "M" + M.l + "," + y(0);
    bw.forEach((v, k) => { d += "L" + (M.l + k * cell).toFixed(1) + "," + y(v).toFixed(1) + "L" + (M.l + (k + 1) * cell).toFixed(1) + "," + y(v).toFixed(1); });
    d += "L" + (M.l + bins * cell) + "," + y(0) + "Z";
    g.append("path").attr("d", d).attr("fill", "#e8590c").attr("fill-opacity", 0.7).attr("data-peak", Math.max(...bw));
    g.append("g").attr("transform", `translate(${M.l},0)`).call(axisRight(y).ticks(2).tickSize(3).tickFormat(v => si(v, "B/s", 2)))
      .call(a => a.selectAll("text").attr("font-size", 9).attr("stroke", "#fff").attr("stroke-width", 2.5).attr("paint-order", "stroke"));
  }

  zoomable(svg, x, H) {
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
  }

  /** Outlines the bins of the ops in `names` (a Set) and fades the others; null clears. */
  highlight(names) {
    this.marked = names;
    this.svg.selectAll("rect.bin").classed("hl", function () { return !!names && names.has(this.dataset.op); })
      .classed("faded", function () { return !!names && !names.has(this.dataset.op); });
  }
}
