// A run as the views read it: summary.json + roofline.json (docs/outputs.md), indexed by entity.

/** Adds `entity(scope, name)` (summary entry + roofline points by level) and `roof(name)` to a run. */
export function indexRun(r) {
  const entities = new Map();
  const key = (scope, name) => scope + "\u0000" + name;
  const get = (scope, name) => {
    const k = key(scope, name);
    if (!entities.has(k)) entities.set(k, {scope, name, points: {}, summary: null, energy: null});
    return entities.get(k);
  };
  get("network", "network").summary = r.summary;
  for (const o of r.summary.ops) get("op", o.name).summary = o;
  for (const g of r.summary.groups) get("group", g.name).summary = g;
  for (const p of r.roofline.points) get(p.scope, p.name).points[p.level] = p;
  if (r.roofline.energy) for (const p of r.roofline.energy.points) get(p.scope, p.name).energy = p;
  return Object.assign(r, {entity: (scope, name) => entities.get(key(scope, name)), roof: name => r.roofline.roofs.find(x => x.name === name)});
}

/**
 * Arrows from each op of `a` (unfused) to where it runs in `b`: its multi-op group, or itself
 * when it runs alone; ops without a point (views) get none. The rule of traces::compare_arrows,
 * applied to the summaries the page has.
 */
export function deriveArrows(a, b) {
  const groupOf = new Map(b.summary.ops.map(o => [o.name, o.group]));
  const members = new Map(b.summary.groups.map(g => [g.name, g.members.length]));
  const out = [];
  for (const o of a.summary.ops) {
    const from = a.entity("op", o.name);
    if (!from || !from.points.dram) continue;
    const g = groupOf.get(o.name);
    out.push({from: o.name, to: g && members.get(g) > 1 ? g : o.name});
  }
  return out;
}

/** The DRAM point of `name` in the first scope of `scopes` that has one. */
export function findDram(r, name, scopes) {
  for (const sc of scopes) {
    const e = r.entity(sc, name);
    if (e && e.points.dram) return e.points.dram;
  }
  return null;
}

/**
 * DRAM round-trips of a run: ops whose output is written to DRAM (and read back by the next op,
 * unless it is the network's output). Definition: docs/serve.md.
 */
export function roundTrips(r) {
  const ops = r.summary.ops.filter(o => o.dram_write_bytes > 0);
  return {count: ops.length, bytes: ops.reduce((s, o) => s + o.dram_write_bytes, 0)};
}
