// npm test: bundles each test/*.test.ts with esbuild (the sources are TypeScript, Node 20
// runs JavaScript) into a temporary folder
// under node_modules and runs them with node --test; exits with its code.
// `tsc -p test` (the first half of npm test) has type-checked them already.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const tests = readdirSync(here).filter((f) => f.endsWith(".test.ts")).sort();
// Inside node_modules, so that what stays outside the bundles (jsdom) is found from there.
const out = mkdtempSync(join(here, "..", "node_modules", ".forge-js-tests-"));
try {
  await esbuild.build({
    entryPoints: tests.map((f) => join(here, f)),
    outdir: out,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: ["node20"],
    sourcemap: "inline",
    logLevel: "warning",
    external: ["jsdom"], // it loads its own files at run time: not bundleable
    // the tests read their cases next to their source, not next to the bundle
    define: { "import.meta.dirname": JSON.stringify(here) },
  });
  const files = tests.map((f) => join(out, f.replace(/\.ts$/, ".mjs")));
  const done = spawnSync(process.execPath, ["--test", "--test-reporter=spec", ...files], { stdio: "inherit" });
  process.exitCode = done.status ?? 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
