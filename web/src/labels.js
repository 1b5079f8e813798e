// Greedy label placement for the plots: each label is tried at a few candidate places and put at
// the first one whose box stays inside the plot and overlaps no earlier label, marker or line;
// a label with no free place is left out rather than drawn over another.

/** Does the segment (x1,y1)-(x2,y2) cross the rectangle r? */
function segmentHitsRect(x1, y1, x2, y2, r) {
  const inside = (x, y) => x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h;
  if (inside(x1, y1) || inside(x2, y2)) return true;
  const cross = (ax, ay, bx, by, cx, cy, dx, dy) => {
    const d = (bx - ax) * (dy - cy) - (by - ay) * (dx - cx);
    if (d === 0) return false;
    const u = ((cx - ax) * (dy - cy) - (cy - ay) * (dx - cx)) / d, v = ((cx - ax) * (by - ay) - (cy - ay) * (bx - ax)) / d;
    return u >= 0 && u <= 1 && v >= 0 && v <= 1;
  };
  const {x, y, w, h} = r;
  return cross(x1, y1, x2, y2, x, y, x + w, y) || cross(x1, y1, x2, y2, x, y + h, x + w, y + h) ||
    cross(x1, y1, x2, y2, x, y, x, y + h) || cross(x1, y1, x2, y2, x + w, y, x + w, y + h);
}

const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

export class LabelPlacer {
  /** measure(text, weight) -> width in px at font size 11; bounds {x0, y0, x1, y1}. */
  constructor(measure, bounds) {
    this.measure = measure;
    this.bounds = bounds;
    this.reset();
  }
  reset() { this.boxes = []; this.lines = []; }
  box(x, y, w, h) { this.boxes.push({x, y, w, h}); }
  line(x1, y1, x2, y2) { this.lines.push([x1, y1, x2, y2]); }

  /** The axis-aligned box of `text` drawn at (x, y) with `anchor`, rotated by `rotate` degrees about (x, y). */
  rect(text, c, size, weight) {
    const w = this.measure(text, weight) * size / 11 + 2, h = size + 2;
    const left = c.anchor === "end" ? -w : c.anchor === "middle" ? -w / 2 : 0;
    const corners = [[left, -h * 0.8], [left + w, -h * 0.8], [left, h * 0.25], [left + w, h * 0.25]];
    const a = (c.rotate || 0) * Math.PI / 180, cos = Math.cos(a), sin = Math.sin(a);
    const xs = corners.map(([u, v]) => c.x + u * cos - v * sin), ys = corners.map(([u, v]) => c.y + u * sin + v * cos);
    const x0 = Math.min(...xs), y0 = Math.min(...ys);
    return {x: x0, y: y0, w: Math.max(...xs) - x0, h: Math.max(...ys) - y0};
  }

  /**
   * Places `text` at the first free candidate ({x, y, anchor, rotate}); returns it, or null.
   * opts: size (font px, 11), weight, ignoreLines (a label that sits on its own line),
   * ignoreBoxes (a label that must be shown: the roof and the point the headline's bound names).
   */
  place(text, candidates, opts = {}) {
    const size = opts.size || 11, b = this.bounds;
    for (const c of candidates) {
      const r = this.rect(text, c, size, opts.weight);
      if (r.x < b.x0 || r.y < b.y0 || r.x + r.w > b.x1 || r.y + r.h > b.y1) continue;
      if (!opts.ignoreBoxes && this.boxes.some(o => overlap(r, o))) continue;
      if (!opts.ignoreLines && this.lines.some(l => segmentHitsRect(...l, r))) continue;
      this.boxes.push(r);
      return {x: c.x, y: c.y, anchor: c.anchor, rotate: c.rotate || 0};
    }
    return null;
  }
}
