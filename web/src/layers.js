// Every op (or every fused group) of a run in one table: sortable by any column, filterable, and
// linked both ways to the roofline points and the unit timeline (hover or click a row to
// highlight them; hovering a point or a timeline bin highlights its row).
import {STALLS, badge, esc, int, num, pct, si, stacked} from "./format.js";

const dramBytes = s => s.dram_read_bytes + s.dram_write_bytes;

/**
 * The point an entity is judged at: the level of its bound roof (SRAM or DRAM), for a compute
 * or latency bound the level nearest its roof (roofline.json's `bottleneck`); null without one.
 */
export function judgedPoint(r, scope, o) {
  const e = r && r.entity && r.entity(scope, o.name);
  if (!e) return null;
  const p = e.points;
  const lvl = o.bound_roof === "SRAM" ? "sram" : o.bound_roof === "DRAM" ? "dram" : p.sram && p.sram.bottleneck ? "sram" : "dram";
  return p[lvl] ? {level: lvl, q: p[lvl]} : p.dram ? {level: "dram", q: p.dram} : p.sram ? {level: "sram", q: p.sram} : null;
}

/** Columns: key, header, sort value, cell html, class. */
function columns(scope, r) {
  const judged = o => judgedPoint(r, scope, o);
  return [
    ["name", scope === "op" ? "op" : "group", o => o.name, o => esc(o.name), "l name"],
    ["what", scope === "op" ? "kind" : "members", o => (scope === "op" ? o.kind : o.members.length),
      o => (scope === "op" ? esc(o.kind) : o.members.length + " ops"), "l what"],
    ["time_share", "time share", o => o.time_share, (o, max) => '<span class="share" style="width:' + (24 * o.time_share / max).toFixed(1) + 'px"></span>' + pct(o.time_share), "l share-col"],
    ["cycles", "cycles", o => o.cycles, o => int(o.cycles), ""],
    ["bound", "bound", o => o.bound, o => badge(o.bound), "l"],
    ["bound_roof", "bound roof", o => o.bound_roof || "", o => '<span title="' + esc(o.bound_text || "") + '">' + esc(o.bound_roof || "–") + "</span>", "l roof-col"],
    ["fraction_of_bound_roof", "% of it", o => o.fraction_of_bound_roof, o => pct(o.fraction_of_bound_roof), ""],
    ["fraction_of_peak", "% of peak", o => o.fraction_of_peak, o => pct(o.fraction_of_peak), ""],
    ["intensity", "ops/B at level", o => { const j = judged(o); return j ? j.q.intensity : null; },
      o => { const j = judged(o); return j ? '<span title="ops per ' + (j.level === "sram" ? "SRAM" : "DRAM") + " byte: the level of the roof it is judged by (DRAM " + num(o.arithmetic_intensity) + ' ops/B)">' +
        num(j.q.intensity) + ' <span class="lvl">' + (j.level === "sram" ? "SRAM" : "DRAM") + "</span></span>" : "–"; }, "int-col"],
    ["dram", "DRAM", o => dramBytes(o), o => si(dramBytes(o), "B"), ""],
    ["energy_j", "energy", o => o.energy_j, o => (o.energy_j === null ? "–" : si(o.energy_j, "J")), ""],
    ["stalls", "where the time went", o => (o.stalls && o.stalls.span_s ? o.stalls.compute_s / o.stalls.span_s : -1),
      o => (o.stalls && o.stalls.unit ? stacked(STALLS.map(([k, l, c]) => [o.stalls[k], l, c]), o.stalls.span_s, "narrow") : ""), "l stall-col"],
  ];
}

export class LayerTable {
  constructor(holder) {
    this.holder = holder;
    this.scope = "op";
    this.sort = {key: "time_share", dir: -1};
    this.filter = "";
    this.onHover = () => {};
    this.sticky = null;
    holder.innerHTML = '<div class="layer-controls"><label><input type="radio" name="layer-scope" value="op" checked> ops</label> ' +
      '<label><input type="radio" name="layer-scope" value="group"> fused groups</label> ' +
      '<input type="search" id="layer-filter" placeholder="filter: name, kind, bound, roof…"> <span class="count"></span></div>' +
      '<div class="layer-scroll"><table class="layers"></table></div><div class="note"></div>';
    this.table = holder.querySelector("table");
    this.count = holder.querySelector(".count");
    holder.querySelectorAll("input[name=layer-scope]").forEach(i => i.addEventListener("change", e => { this.scope = e.target.value; this.render(); }));
    holder.querySelector("#layer-filter").addEventListener("input", e => { this.filter = e.target.value.trim().toLowerCase(); this.render(); });
    this.table.addEventListener("click", e => {
      const th = e.target.closest("th");
      if (th) {
        const key = th.dataset.key;
        this.sort = {key, dir: this.sort.key === key ? -this.sort.dir : key === "name" || key === "what" || key === "bound" || key === "bound_roof" ? 1 : -1};
        return this.render();
      }
      const tr = e.target.closest("tr[data-name]");
      if (tr) this.onHover(tr.dataset.scope, tr.dataset.name, true);
    });
    this.table.addEventListener("mouseover", e => {
      const tr = e.target.closest("tr[data-name]");
      if (tr) this.onHover(tr.dataset.scope, tr.dataset.name);
    });
    this.table.addEventListener("mouseleave", () => this.onHover(null, null));
  }

  update(r) {
    this.r = r;
    this.render();
  }

  rows() {
    const sm = this.r.summary;
    const list = this.scope === "op" ? sm.ops.filter(o => o.cycles > 0 || o.time_share > 0) : sm.groups.filter(g => g.members.length > 1 && (g.cycles > 0 || g.time_share > 0));
    const f = this.filter;
    const shown = !f ? list : list.filter(o => [o.name, o.kind, o.group, o.bound, o.bound_roof, o.latency_cause, ...(o.members || [])]
      .some(v => v && String(v).toLowerCase().includes(f)));
    const cols = columns(this.scope, this.r), col = cols.find(c => c[0] === this.sort.key) || cols[2];
    const val = o => { const v = col[2](o); return v === null || v === undefined ? -Infinity : v; };
    return {all: list.length, rows: shown.slice().sort((a, b) => {
      const va = val(a), vb = val(b);
      return (typeof va === "string" ? va.localeCompare(vb) : va - vb) * this.sort.dir;
    })};
  }

  render() {
    const cols = columns(this.scope, this.r), {all, rows} = this.rows();
    const max = Math.max(1e-9, ...rows.map(o => o.time_share));
    let html = "<thead><tr>" + cols.map(([k, h, , , cls]) => '<th data-key="' + k + '" class="' + cls + (this.sort.key === k ? (this.sort.dir > 0 ? " sorted-asc" : " sorted-desc") : "") +
      '" title="sort by ' + esc(h) + '">' + esc(h) + "</th>").join("") + "</tr></thead><tbody>";
    for (const o of rows) {
      const tip = this.scope === "op" ? (o.group ? "group: " + o.group : "") : o.members.join(", ");
      html += '<tr data-scope="' + this.scope + '" data-name="' + esc(o.name) + '" title="' + esc((o.bound_text || "") + (tip ? "\n" + tip : "")) + '">' +
        cols.map(([, , , cell, cls]) => '<td class="' + cls + '">' + cell(o, max) + "</td>").join("") + "</tr>";
    }
    this.table.innerHTML = html + "</tbody>";
    this.table.dataset.sort = this.sort.key + (this.sort.dir > 0 ? " asc" : " desc");
    this.table.dataset.rows = String(rows.length);
    this.count.textContent = rows.length === all ? all + " " + (this.scope === "op" ? "ops" : "fused groups") : rows.length + " of " + all;
    this.holder.querySelector(".note").innerHTML = "Every " + (this.scope === "op" ? "op that ran" : "fused group") + ". Click a header to sort, type to filter; hover or click a row to find it on the roofline and the timeline. " +
      "Time share: each instant of the run shared equally among what is in flight (sums to 100 %); cycles: the span, first command begin to last end. " +
      "Bound roof: the roof that limits it (docs/outputs.md), % of it and % of the compute peak; hover the roof for the sentence with the reason. " +
      "ops/B at level: the intensity at the level of the roof it is judged by (SRAM when the SRAM roof binds, else the level nearest its roof), so it reads against that roof.";
    if (this.sticky) this.highlight(...this.sticky, true);
  }

  /** Marks the row of (scope, name); `scroll` brings it into the table's view. */
  highlight(scope, name, scroll = false) {
    if (scroll) this.sticky = name === null ? null : [scope, name];
    let hit = null;
    for (const tr of this.table.querySelectorAll("tr[data-name]")) {
      const on = name !== null && tr.dataset.name === name && (!scope || tr.dataset.scope === scope);
      tr.classList.toggle("hl", on);
      if (on) hit = tr;
    }
    if (hit && scroll) {
      const box = hit.parentElement.closest(".layer-scroll");
      box.scrollTop = hit.offsetTop - box.clientHeight / 2;
    }
  }
}
