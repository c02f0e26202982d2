// Eight Node processes of eight workers on one key, through the openai SDK and limitedFetch,
// against a fake provider that counts rejected requests against its limit (as OpenAI does), with
// the daemon configured to the provider's limit: every job succeeds and the provider refuses none.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as path from "node:path";
import * as readline from "node:readline";
import { fileURLToPath } from "node:url";
import { Provider, startDaemon, waitUntil } from "./harness.mjs";

const PROCESSES = 8;
const WORKERS = 8;
const JOBS = 320; // 40 a process
const RPM = 1200; // 20 requests a second
const BURST = 20;
const LATENCY_MS = 20;
const KEY = "openai/load";
const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "load_worker.mjs");

let daemon;
let provider;

// The provider's bucket stays full, losing refill, until the burst's first requests reach it;
// eight Node processes starting at once on a small machine take longer than the default 20 ms
// allowance to get them there, so the daemon allows them 100 ms (README: transit_allowance).
before(async () => {
  daemon = await startDaemon(`[daemon]\ntransit_allowance = "100ms"\n\n[keys."${KEY}"]\nrequests_per_minute = ${RPM}\nburst_requests = ${BURST}\n`);
  provider = await Provider.start("--rpm", String(RPM), "--burst-requests", String(BURST), "--count-rejected", "--latency", `${LATENCY_MS}ms`);
});

after(async () => {
  provider.close();
  await daemon.close();
});

test("eight processes share one limit without a 429", async () => {
  const procs = Array.from({ length: PROCESSES }, () => {
    const p = spawn(process.execPath, [worker, daemon.socket, provider.url, KEY, String(JOBS / PROCESSES), String(WORKERS)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    // Lines are kept until asked for: a process may say "ready" before its turn to be heard.
    const lines = readline.createInterface({ input: p.stdout });
    const queue = [];
    const asking = [];
    lines.on("line", (l) => (asking.length ? asking.shift()(l) : queue.push(l)));
    p.next = () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve) => asking.push(resolve)));
    p.ended = new Promise((resolve) => p.once("exit", resolve));
    return p;
  });
  try {
    for (const p of procs) {
      assert.equal(await p.next(), "ready");
    }
    // Both start full: the daemon's bucket starts empty, so let it fill; the provider's fills on reset.
    await waitUntil(() => {
      const b = daemon.key(KEY)?.buckets.find((x) => x.dimension === "requests");
      return b && b.level >= b.capacity;
    }, 30_000, "the daemon's bucket to fill");
    await provider.reset();
    const started = Date.now();
    const results = procs.map((p) => p.next());
    for (const p of procs) {
      p.stdin.write("go\n");
    }
    const out = (await Promise.all(results)).map((l) => JSON.parse(l));
    await Promise.all(procs.map((p) => p.ended));
    const ok = out.reduce((n, r) => n + r.ok, 0);
    const failed = out.reduce((n, r) => n + r.failed, 0);
    const wall = (Math.max(...out.map((r) => r.lastEnd)) - started) / 1000;
    const stats = await provider.stats();
    const rejected = stats.responses["429"] ?? 0;
    const ideal = (JOBS - BURST) / (RPM / 60) + LATENCY_MS / 1000;
    console.log(
      `load: ${PROCESSES} Node processes x ${WORKERS} workers, ${JOBS} jobs, provider ${RPM} rpm burst ${BURST} ` +
        `(rejected requests counted): ${ok} ok, ${failed} failed; provider saw ${stats.requests} requests, ` +
        `${rejected} 429s; wall ${wall.toFixed(2)} s, ideal ${ideal.toFixed(2)} s, ratio ${(wall / ideal).toFixed(3)}`,
    );
    assert.equal(failed, 0, JSON.stringify(out.flatMap((r) => r.errors)));
    assert.equal(ok, JOBS);
    assert.equal(rejected, 0, JSON.stringify(stats));
    assert.equal(stats.responses["200"], JOBS);
  } finally {
    for (const p of procs) {
      if (p.exitCode === null) {
        p.kill("SIGKILL");
      }
    }
  }
});
