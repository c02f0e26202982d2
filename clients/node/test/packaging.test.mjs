// The package as a user gets it, from a fresh checkout (the repository's files, nothing built or
// installed, no node_modules): `npm install ./clients/node` at the checkout's root and from another
// project, and `npm pack` there with its tarball installed into a fresh project; each loads from
// ES modules and from CommonJS and calls the daemon.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT, startDaemon } from "./harness.mjs";

let daemon;
let tmp;
let checkout;
const projects = {};

/** A fresh checkout: the files a commit of the working tree holds (tracked, and new ones not
 * ignored), copied into `dir`. */
function freshCheckout(dir) {
  const ls = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(ls.status, 0, ls.stderr);
  for (const rel of ls.stdout.split("\0").filter(Boolean)) {
    const from = path.join(ROOT, rel);
    if (!fs.existsSync(from)) {
      continue; // deleted in the working tree
    }
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, rel));
  }
  assert.ok(!fs.existsSync(path.join(dir, "clients/node/node_modules")));
}

function npm(args, cwd) {
  const r = spawnSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });
  assert.equal(r.status, 0, `npm ${args.join(" ")} in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function freshProject(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, private: true }));
  return dir;
}

before(async () => {
  daemon = await startDaemon();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-pack-"));
  checkout = path.join(tmp, "checkout");
  freshCheckout(checkout);
  const pkg = path.join(checkout, "clients", "node");

  // The README's lines, as written, at the checkout's root.
  npm(["install", "./clients/node"], checkout);
  projects.root = checkout;

  // The same folder from a project of the user's.
  projects.folder = freshProject("uses-folder");
  npm(["install", pkg], projects.folder);

  // A tarball packed in the fresh checkout (no build step runs: dist/ is committed).
  const packed = freshProject("packs");
  const out = npm(["pack", "--silent", "--pack-destination", packed], pkg);
  const tarball = path.join(packed, out.trim().split("\n").pop());
  const files = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8" }).stdout;
  for (const f of ["package/dist/index.js", "package/dist/index.d.ts", "package/dist/cjs/index.js", "package/dist/cjs/package.json"]) {
    assert.ok(files.includes(f), `${f} in the tarball:\n${files}`);
  }
  projects.tarball = freshProject("uses-tarball");
  npm(["install", tarball], projects.tarball);
  assert.ok(!fs.existsSync(path.join(pkg, "node_modules")), "nothing was installed into the checkout's package");
});

after(async () => {
  await daemon?.close();
  if (tmp) {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

function run(dir, file, source) {
  fs.writeFileSync(path.join(dir, file), source);
  return spawnSync(process.execPath, [file], { cwd: dir, encoding: "utf8", env: { ...process.env, LLMCTL_SOCKET: daemon.socket } });
}

const CALL = `
  const c = new Client();
  const lease = await c.acquire("pack/" + KIND, { inputTokens: 10, outputTokens: 5 });
  await lease.report({ status: 200, inputTokens: 10, outputTokens: 5 });
  console.log(KIND, c.limited);
  c.close();
`;

for (const how of ["root", "folder", "tarball"]) {
  test(`installed from the ${how === "root" ? "checkout's root" : how}, it works from ES modules`, () => {
    const kind = `${how}-esm`;
    const r = run(projects[how], `${kind}.mjs`, `import { Client } from "llmctl-client";\nconst KIND = "${kind}";\n${CALL}`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), `${kind} true`);
    assert.equal(daemon.key(`pack/${kind}`).granted_total, 1);
  });

  test(`installed from the ${how === "root" ? "checkout's root" : how}, it works from CommonJS`, () => {
    const kind = `${how}-cjs`;
    const r = run(
      projects[how],
      `${kind}.cjs`,
      `const { Client, isNotGranted } = require("llmctl-client");\nconst KIND = "${kind}";\n(async () => {${CALL}})();`,
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), `${kind} true`);
    assert.equal(daemon.key(`pack/${kind}`).granted_total, 1);
  });
}
