// Builds dist/: the declarations with tsc (dist/*.d.ts), and the code as two bundles with its
// runtime dependencies inside (dist/index.js, ES modules; dist/cjs/index.js, CommonJS). A package
// that needs nothing at run time loads wherever npm puts it: from the tarball, and from a
// checkout's folder, which `npm install ./clients/node` links without installing its
// dependencies. dist/ is committed (a test fails when it is not what src/ builds), so neither
// install has a build step to run.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const pkg = path.dirname(fileURLToPath(import.meta.url));
// `node build.mjs [OUT]`: OUT (default dist/) is made anew; the drift test builds elsewhere.
const out = path.resolve(process.argv[2] ?? path.join(pkg, "dist"));
rmSync(out, { recursive: true, force: true });
const tsc = path.join(pkg, "node_modules", "typescript", "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(pkg, "tsconfig.json"), "--outDir", out], { stdio: "inherit" });
const common = {
  entryPoints: [path.join(pkg, "src", "index.ts")],
  bundle: true,
  platform: "node",
  target: "node20",
  legalComments: "inline",
  absWorkingDir: pkg,
  logLevel: "warning",
};
await build({ ...common, format: "esm", outfile: path.join(out, "index.js") });
await build({ ...common, format: "cjs", outfile: path.join(out, "cjs", "index.js") });
// The package is ES modules; dist/cjs is CommonJS.
mkdirSync(path.join(out, "cjs"), { recursive: true });
writeFileSync(path.join(out, "cjs", "package.json"), '{ "type": "commonjs" }\n');
