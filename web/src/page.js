// The page's sections, shared by the live page (app.js) and report.html (report.js): one
// drawing code for both. The roofline, the per-layer table and the timeline are linked: hovering
// (or clicking) an entity in one highlights it in the others.
import {BytesView, energyPanel, fusionSavedPanel, headline, notFusedPanel, stallPanel, unitPanel} from "./panels.js";
import {energyRoofline} from "./energy_roofline.js";
import {LayerTable} from "./layers.js";
import {RooflineView} from "./roofline.js";
import {TimelineView} from "./timeline.js";
import {deriveArrows, indexRun} from "./model.js";

/** A titled <section> appended to `main`; returns its body element. */
export function section(main, id, title) {
  const sec = document.createElement("section");
  sec.id = id;
  sec.innerHTML = "<h2>" + title + "</h2>";
  const body = document.createElement("div");
  body.className = "body";
  sec.appendChild(body);
  main.appendChild(sec);
  return body;
}

/** Resolves once the next frame's main-thread work (style, layout, paint) is done: what the reader first sees. */
export function afterFrame() {
  return new Promise(resolve => requestAnimationFrame(() => {
    const c = new MessageChannel();
    c.port1.onmessage = () => resolve();
    c.port2.postMessage(0);
  }));
}

/**
 * Builds the sections in `main`. opts: onZoom (live page: asks for a timeline window), space
 * (the config space the roofline's axes must show), timelines (report: how many runs bring a
 * timeline), compare (report: a compare report with the per-group table), defer (live page: the
 * views below the roofline are drawn a frame after it, see renderPage).
 */
export function buildPage(main, opts = {}) {
  const p = {summary: section(main, "summary", "Summary"), defer: Boolean(opts.defer)};
  if (opts.compare) p.saved = section(main, "fusion-saved", "What fusion saved, per group");
  p.roofline = section(main, "roofline", "Roofline (hierarchical: DRAM and SRAM intensity)");
  p.layers = section(main, "layers", "Every layer: ops and fused groups");
  p.timelines = [];
  const nTimelines = opts.onZoom ? 1 : opts.timelines || 0;
  for (let i = 0; i < nTimelines; i++) p.timelines.push(section(main, i ? "timeline-" + i : "timeline", "Unit timeline"));
  p.bytes = section(main, "dram-bytes-view", "DRAM round-trips and bytes per op");
  p.energyRoof = section(main, "energy-roofline", "Energy roofline");
  p.energy = section(main, "energy", "Energy");
  p.stalls = section(main, "stalls", "Stall breakdown");
  p.notFused = section(main, "not-fused", "Why groups were not fused");
  p.units = section(main, "units", "Unit utilisation");
  p.rooflineView = new RooflineView(p.roofline, opts.space || null);
  p.layerTable = new LayerTable(p.layers);
  p.bytesView = new BytesView(p.bytes);
  p.timelineViews = p.timelines.map((holder, i) => new TimelineView(holder, i === 0 ? opts.onZoom || null : null));
  // One hover or click anywhere highlights the entity everywhere.
  const link = (scope, name, sticky = false) => {
    p.rooflineView.highlight(scope, name);
    p.layerTable.highlight(scope, name, sticky);
    const r = p.current;
    let ops = null;
    if (name !== null && r) {
      const g = scope === "group" && r.summary.groups.find(x => x.name === name);
      ops = new Set(g ? g.members : [name]);
    }
    for (const v of p.timelineViews) v.highlight(ops);
  };
  p.rooflineView.onHover = link;
  p.layerTable.onHover = link;
  for (const v of p.timelineViews) v.onHover = link;
  return p;
}

/**
 * Draws `cur` ({label, summary, roofline}); `unfused` (same hardware, fusion none, or null)
 * gives the open points and arrows; `baseline` (pinned, or null) the comparison on the roofline;
 * `deltaBase` the run the headline figures are compared with; `compareGroups` (report of
 * npusim compare) the per-group table.
 */
export function renderPage(p, cur, unfused, baseline, arrows, deltaBase = baseline, compareGroups = null) {
  for (const r of [cur, unfused, baseline, deltaBase]) if (r && !r.entity) indexRun(r);
  p.current = cur;
  const runs = unfused ? [unfused, cur] : [cur];
  headline(p.summary, cur, deltaBase);
  if (p.saved && unfused) fusionSavedPanel(p.saved, compareGroups, unfused, cur);
  p.rooflineView.update(runs, unfused ? arrows || deriveArrows(unfused, cur) : [], baseline);
  const rest = () => {
    p.layerTable.update(cur);
    p.bytesView.update(cur, unfused);
    energyRoofline(p.energyRoof, cur);
    energyPanel(p.energy, cur);
    stallPanel(p.stalls, cur);
    notFusedPanel(p.notFused, cur);
    unitPanel(p.units, cur);
  };
  if (!p.defer) {
    rest();
    return Promise.resolve();
  }
  // The live page: the headline and the roofline (what a change is watched on) are painted
  // first, the views below them a frame later (about half of the redraw's script). A newer
  // render before then draws its own.
  const token = (p.rendering = {});
  return afterFrame().then(() => { if (p.rendering === token) rest(); });
}

/** Draws a timeline (the compact JSON of docs/serve.md) of run `r` into view `i`. */
export function renderTimeline(p, i, tl, r, title) {
  const view = p.timelineViews[i];
  if (!view || !tl) return;
  if (title) view.holder.parentElement.querySelector("h2").textContent = title;
  const dram = r.roofline.roofs.find(x => x.name === "DRAM");
  view.update(tl, dram ? dram.value : 0);
}
