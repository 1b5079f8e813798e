// The page's sections, shared by the live page (app.js) and report.html (report.js): one
// drawing code for both.
import {BytesView, energyPanel, headline, notFusedPanel, stallPanel, topOps, unitPanel} from "./panels.js";
import {energyRoofline} from "./energy_roofline.js";
import {RooflineView} from "./roofline.js";
import {TimelineView} from "./timeline.js";
import {deriveArrows, indexRun} from "./model.js";

function section(main, id, title) {
  const sec = document.createElement("section");
  sec.id = id;
  sec.innerHTML = "<h2>" + title + "</h2>";
  const body = document.createElement("div");
  body.className = "body";
  sec.appendChild(body);
  main.appendChild(sec);
  return body;
}

/** Builds the sections in `main`; `onZoom` (live page only) asks for a timeline window. */
export function buildPage(main, onZoom) {
  const p = {
    summary: section(main, "summary", "Summary"),
    roofline: section(main, "roofline", "Roofline (hierarchical: DRAM and SRAM intensity)"),
    bytes: section(main, "dram-bytes-view", "DRAM round-trips and bytes per op"),
    timeline: onZoom ? section(main, "timeline", "Unit timeline") : null,
    top: section(main, "top-ops", "Top ops by time"),
    energyRoof: section(main, "energy-roofline", "Energy roofline"),
    energy: section(main, "energy", "Energy"),
    stalls: section(main, "stalls", "Stall breakdown"),
    notFused: section(main, "not-fused", "Why groups were not fused"),
    units: section(main, "units", "Unit utilisation"),
  };
  p.rooflineView = new RooflineView(p.roofline);
  p.bytesView = new BytesView(p.bytes);
  if (onZoom) p.timelineView = new TimelineView(p.timeline, onZoom);
  return p;
}

/**
 * Draws `cur` ({label, summary, roofline}); `unfused` (same hardware, fusion none, or null)
 * gives the open points and arrows; `baseline` (pinned, or null) the comparison on the roofline;
 * `deltaBase` the run the headline figures are compared with.
 */
export function renderPage(p, cur, unfused, baseline, arrows, deltaBase = baseline) {
  for (const r of [cur, unfused, baseline, deltaBase]) if (r && !r.entity) indexRun(r);
  const runs = unfused ? [unfused, cur] : [cur];
  headline(p.summary, cur, deltaBase);
  p.rooflineView.update(runs, unfused ? arrows || deriveArrows(unfused, cur) : [], baseline);
  p.bytesView.update(cur, unfused);
  topOps(p.top, cur);
  energyRoofline(p.energyRoof, cur);
  energyPanel(p.energy, cur);
  stallPanel(p.stalls, cur);
  notFusedPanel(p.notFused, cur);
  unitPanel(p.units, cur);
}
