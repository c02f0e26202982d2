// The Session: a killed process's slots come back at once, and a live one never keeps Node up.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { startDaemon, waitUntil } from "./harness.mjs";

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
let daemon;

before(async () => {
  daemon = await startDaemon('[keys."node/one"]\nmax_concurrency = 1\n');
});

after(async () => {
  await daemon.close();
});

function node(script, ...args) {
  const child = spawn(process.execPath, [path.join(fixtures, script), daemon.socket, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout.setEncoding("utf8");
  child.lines = new Promise((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) {
        resolve(out.trim());
      }
    });
  });
  child.ended = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return child;
}

test("a killed Node process's concurrency slot is back within a second", async () => {
  const child = node("hold.mjs", "node/one");
  assert.equal(await child.lines, "held");
  assert.equal(daemon.key("node/one").in_flight, 1);
  const killed = Date.now();
  child.kill("SIGKILL");
  await waitUntil(() => daemon.key("node/one").in_flight === 0, 5_000, "the slot to come back");
  const ms = Date.now() - killed;
  console.log(`slot back ${ms} ms after kill -9`);
  assert.ok(ms < 1_000, `the slot came back after ${ms} ms`);
});

test("a client left open does not keep the process alive", async () => {
  const child = node("exits.mjs");
  assert.equal(await child.lines, "done");
  const timeout = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const end = await child.ended;
  clearTimeout(timeout);
  assert.deepEqual(end, { code: 0, signal: null }, "the process had to be killed: something kept it alive");
});
