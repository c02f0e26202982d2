// A client given no socket, on a host where no daemon runs: it starts one (the llmctl binary on
// PATH), many processes starting at once start one, and the daemon stops when idle.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, waitUntil } from "./harness.mjs";

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/index.js");

/** A fresh user's environment: its own folders, llmctl on PATH, no daemon. */
function home() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-auto-"));
  fs.mkdirSync(path.join(dir, "run"), { mode: 0o700 });
  const env = {
    HOME: dir,
    XDG_RUNTIME_DIR: path.join(dir, "run"),
    XDG_STATE_HOME: path.join(dir, "state"),
    XDG_CONFIG_HOME: path.join(dir, "config"),
    PATH: `${path.dirname(BIN)}:/usr/bin:/bin`,
    LLMCTL_AUTOSTART: "1",
    LLMCTL_AUTOSTART_IDLE_EXIT: "3s",
  };
  return { dir, env, socket: path.join(dir, "run", "llmctl", "llmctl.sock") };
}

/** The daemons serving `socket`, by their command lines. */
function daemonsOn(socket) {
  const out = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let args;
    try {
      args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (args.includes("daemon") && args.includes(socket)) out.push(Number(pid));
  }
  return out;
}

const SCRIPT = `
import { Client } from ${JSON.stringify(DIST)};
const c = new Client();
const lease = await c.acquire("local/node-start", { maxWait: 30_000 });
if (!c.limited) { console.error("not limited"); process.exit(3); }
await lease.report({ status: 200 });
c.close();
`;

function run(env) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    p.once("exit", (code) => resolve({ code, err }));
  });
}

test("processes starting at once start one daemon, and it stops when idle", async () => {
  const h = home();
  try {
    const results = await Promise.all(Array.from({ length: 6 }, () => run(h.env)));
    for (const r of results) assert.equal(r.code, 0, r.err);
    assert.equal(daemonsOn(h.socket).length, 1);
    assert.ok(fs.existsSync(path.join(h.dir, "state", "llmctl", "daemon.log")));
    await waitUntil(() => daemonsOn(h.socket).length === 0, 15_000, "the started daemon to exit when idle");
  } finally {
    for (const pid of daemonsOn(h.socket)) process.kill(pid, "SIGKILL");
    fs.rmSync(h.dir, { recursive: true, force: true });
  }
});
