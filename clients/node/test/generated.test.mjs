// The committed TypeScript is what buf and protoc-gen-es make from proto/ now.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("src/gen matches proto/", () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-gen-"));
  try {
    const template = JSON.stringify({
      version: "v2",
      plugins: [{ local: path.join(pkg, "node_modules/.bin/protoc-gen-es"), out, opt: ["target=ts", "import_extension=js"] }],
    });
    const r = spawnSync(path.join(pkg, "node_modules/.bin/buf"), ["generate", path.join(pkg, "../../proto"), "--template", template], {
      cwd: pkg,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    const rel = "llmctl/v1/limiter_pb.ts";
    assert.equal(
      fs.readFileSync(path.join(out, rel), "utf8"),
      fs.readFileSync(path.join(pkg, "src/gen", rel), "utf8"),
      "src/gen is stale: run `npm run generate` in clients/node",
    );
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

function files(dir, rel = "") {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

test("the committed dist/ is what src/ builds", () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-dist-"));
  try {
    const r = spawnSync(process.execPath, [path.join(pkg, "build.mjs"), out], { cwd: pkg, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const stale = "dist/ is stale: run `npm run build` in clients/node and commit dist/";
    assert.deepEqual(files(path.join(pkg, "dist")), files(out), stale);
    for (const f of files(out)) {
      assert.equal(fs.readFileSync(path.join(pkg, "dist", f), "utf8"), fs.readFileSync(path.join(out, f), "utf8"), `${f}: ${stale}`);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
