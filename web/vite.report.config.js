// report.html: the same sources as one JS bundle and one style sheet, which
// scripts/make_report_template.mjs inlines into dist/report-template.html.
import {defineConfig} from "vite";

export default defineConfig({
  base: "./",
  build: {
    outDir: "dist-report", emptyOutDir: true, cssCodeSplit: false, assetsInlineLimit: 1 << 20, modulePreload: false,
    rollupOptions: {input: {report: "report.html"}, output: {inlineDynamicImports: true}},
  },
});
