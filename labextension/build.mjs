// Builds the standalone anywidget ESM of the cell widget, forge_jupyter/static/widget.js, and
// its widget.css, from the same sources as the labextension (src/render/). The kernel sends
// them to a frontend without the labextension (VS Code, Colab, Notebook without it) when the
// bootstrap asks; see forge_jupyter/static/widget_boot.js.
//   npm run build           (all of it: tsc, the labextension, this)
//   npm run watch:widget    (this bundle only, unminified, while editing)
import * as esbuild from "esbuild";

const options = {
  entryPoints: [
    { in: "src/render/index.ts", out: "widget" },
    { in: "src/render/widget.css", out: "widget" },
  ],
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  legalComments: "none",
  outdir: "../forge_jupyter/static",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context({ ...options, minify: false });
  await ctx.watch();
} else {
  await esbuild.build(options);
}
