// Plot marks drawn where they stand, in their own coordinates: a marker's place is in its path
// data and an axis tick's in its line and text, never in a `transform`. Chromium makes a paint
// property node of every SVG element with a transform (or an opacity below 1), which each frame's
// paint and compositing update (Layerize) walk: with MobileNetV2's 258 roofline markers and 128
// ticks transformed, a frame that moves a marker took 2.3 ms of Layerize and 1.7 ms of paint on
// the development VM (thread time), in place 0.9 and 1.0.

const TAN30 = Math.sqrt(1 / 3);

/**
 * The path of a marker of `scope` (op: circle, group: square, network: diamond) of `area` px²
 * centred on (x, y): the shapes and areas of d3's symbolCircle, symbolSquare and symbolDiamond.
 */
export function markerPath(scope, area, x, y) {
  const f = v => v.toFixed(2);
  if (scope === "group") {
    const h = Math.sqrt(area) / 2;
    return "M" + f(x - h) + "," + f(y - h) + "h" + f(2 * h) + "v" + f(2 * h) + "h" + f(-2 * h) + "Z";
  }
  if (scope === "network") {
    const dy = Math.sqrt(area / (2 * TAN30)), dx = dy * TAN30;
    return "M" + f(x) + "," + f(y - dy) + "L" + f(x + dx) + "," + f(y) + "L" + f(x) + "," + f(y + dy) + "L" + f(x - dx) + "," + f(y) + "Z";
  }
  const r = Math.sqrt(area / Math.PI);
  return "M" + f(x + r) + "," + f(y) + "A" + f(r) + "," + f(r) + ",0,1,1," + f(x - r) + "," + f(y) + "A" + f(r) + "," + f(r) + ",0,1,1," + f(x + r) + "," + f(y) + "Z";
}

/** Adds (dx, dy) to the numeric attribute pair `a`, `b` of `e` (an absent one counts as 0). */
function shift(e, a, b, dx, dy) {
  e.setAttribute(a, (Number(e.getAttribute(a)) || 0) + dx);
  e.setAttribute(b, (Number(e.getAttribute(b)) || 0) + dy);
}

/**
 * Draws the d3 `axis` into the group selection `g` (replacing what it held), then moves each
 * tick's translate into its line's and text's own coordinates, so that no tick keeps a transform.
 */
export function flatAxis(g, axis) {
  g.selectAll("*").remove();
  g.call(axis);
  g.selectAll(".tick").each(function () {
    const m = /translate\(([-\d.e+]+),\s*([-\d.e+]+)\)/.exec(this.getAttribute("transform") || "");
    this.removeAttribute("transform");
    if (!m) return;
    const dx = Number(m[1]), dy = Number(m[2]);
    for (const c of this.children) {
      if (c.tagName === "line") { shift(c, "x1", "y1", dx, dy); shift(c, "x2", "y2", dx, dy); }
      else if (c.tagName === "text") shift(c, "x", "y", dx, dy);
    }
  });
}
