// The package as a user gets it: `npm pack` (its prepare step builds dist/) installed into a
// fresh project, then the daemon called from ES modules and from CommonJS alike.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT, startDaemon } from "./harness.mjs";

const PKG = path.join(ROOT, "clients", "node");
let daemon;
let project;

before(async () => {
  daemon = await startDaemon();
  project = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-pack-"));
  const pack = spawnSync("npm", ["pack", "--silent", "--pack-destination", project], { cwd: PKG, encoding: "utf8" });
  assert.equal(pack.status, 0, pack.stderr);
  const tarball = path.join(project, pack.stdout.trim().split("\n").pop());
  const files = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8" }).stdout;
  for (const f of ["package/dist/index.js", "package/dist/index.d.ts", "package/dist/cjs/index.js", "package/dist/cjs/package.json"]) {
    assert.ok(files.includes(f), `${f} in the tarball:\n${files}`);
  }
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "uses-llmctl", private: true }));
  const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--silent", tarball], { cwd: project, encoding: "utf8" });
  assert.equal(install.status, 0, install.stderr);
});

after(async () => {
  await daemon.close();
  fs.rmSync(project, { recursive: true, force: true });
});

function run(file, source) {
  fs.writeFileSync(path.join(project, file), source);
  return spawnSync(process.execPath, [file], { cwd: project, encoding: "utf8", env: { ...process.env, LLMCTL_SOCKET: daemon.socket } });
}

const CALL = `
  const c = new Client();
  const lease = await c.acquire("pack/" + KIND, { inputTokens: 10, outputTokens: 5 });
  await lease.report({ status: 200, inputTokens: 10, outputTokens: 5 });
  console.log(KIND, c.limited);
  c.close();
`;

test("the packed tarball works from ES modules", () => {
  const r = run("esm.mjs", `import { Client } from "llmctl";\nconst KIND = "esm";\n${CALL}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "esm true");
  assert.equal(daemon.key("pack/esm").granted_total, 1);
});

test("the packed tarball works from CommonJS", () => {
  const r = run("cjs.cjs", `const { Client, isNotGranted } = require("llmctl");\nconst KIND = "cjs";\n(async () => {${CALL}})();`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "cjs true");
  assert.equal(daemon.key("pack/cjs").granted_total, 1);
});
