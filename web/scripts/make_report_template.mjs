// Makes dist/report-template.html: dist-report/report.html with its script and style sheet
// inlined, so that `npusim run` writes one self-contained, offline file (traces/report.cpp
// replaces __NPUSIM_DATA__ with the run's JSON).
import {readFileSync, renameSync, writeFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "dist-report");
let html = readFileSync(join(dir, "report.html"), "utf8");
const read = ref => readFileSync(join(dir, ref.replace(/^\.\//, "")), "utf8");
let scripts = 0, styles = 0;
html = html.replace(/<script type="module" crossorigin src="([^"]+)"><\/script>/g, (_, src) => {
  scripts++;
  // "</script" inside the code would end the element early.
  return '<script type="module">' + read(src).replace(/<\/script/gi, "<\\/script") + "</script>";
});
html = html.replace(/<link rel="stylesheet" crossorigin href="([^"]+)">/g, (_, href) => {
  styles++;
  return "<style>" + read(href).replace(/<\/style/gi, "<\\/style") + "</style>";
});
if (scripts !== 1 || styles !== 1 || !html.includes("__NPUSIM_DATA__") || /<script[^>]+src=|<link /.test(html))
  throw new Error(`report template: expected one script and one style sheet to inline, found ${scripts} and ${styles}`);
const out = join(root, "dist", "report-template.html");
writeFileSync(out + ".tmp", html);
renameSync(out + ".tmp", out);
console.log("wrote " + out + " (" + html.length + " bytes)");
