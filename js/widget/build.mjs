// Builds the widget's one ESM bundle (+ its CSS) into forge_jupyter/static/.
//   npm ci && npm run build        (npm run watch while editing)
import * as esbuild from "esbuild";

const options = {
  entryPoints: ["src/index.js"],
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  legalComments: "none",
  outfile: "../../forge_jupyter/static/widget.js",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const ctx = await esbuild.context({ ...options, minify: false });
  await ctx.watch();
} else {
  await esbuild.build(options);
}
