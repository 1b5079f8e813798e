// The live page (index.html) for `npusim serve`: built into dist/, served by the server itself.
import {defineConfig} from "vite";

export default defineConfig({
  base: "/",
  build: {outDir: "dist", emptyOutDir: true, rollupOptions: {input: {index: "index.html"}}},
});
