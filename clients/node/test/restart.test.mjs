// A daemon restarted under load: limitedFetch's calls wait for it and none goes unlimited, so
// the provider refuses none and no error reaches the caller.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import OpenAI from "openai";
import { Client, limitedFetch } from "../dist/index.js";
import { Provider, sleep, startDaemon } from "./harness.mjs";

test("a restart under load costs no 429 and no unlimited call", async () => {
  const daemon = await startDaemon('[keys."openai/restart"]\nrequests_per_minute = 600\n');
  const provider = await Provider.start("--rpm", "600", "--burst-requests", "10", "--completion-tokens", "4");
  const client = new Client({ socket: daemon.socket });
  try {
    // A new daemon's buckets start empty: let it fill first.
    await sleep(1100);
    const oa = new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "test", fetch: limitedFetch({ client, key: "openai/{model}" }), maxRetries: 0 });
    const calls = [];
    const stop = Date.now() + 6000;
    const worker = async () => {
      while (Date.now() < stop) {
        let err = "";
        try {
          await oa.chat.completions.create({ model: "restart", messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
        } catch (e) {
          err = `${e} (${e?.cause ?? ""}) ${e?.cause?.stack ?? ""}`;
        }
        calls.push({ at: Date.now(), limited: client.limited, err });
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await sleep(2000);
    await daemon.stop();
    await sleep(300);
    await daemon.start();
    const up = Date.now();
    await Promise.all(workers);
    const after = calls.filter((c) => c.at > up).map((c) => c.at - up);
    assert.ok(after.length > 0, "calls went on after the restart");
    console.log(`# first call done ${Math.min(...after)} ms after the restarted daemon answered; ${calls.length} calls`);
    assert.deepEqual(calls.filter((c) => c.err), [], "an error reached the caller");
    assert.deepEqual(calls.filter((c) => !c.limited), [], "a call went unlimited across the restart");
    assert.equal((await provider.stats()).responses["429"] ?? 0, 0);
  } finally {
    client.close();
    provider.close();
    await daemon.close();
  }
});

test("a daemon gone for good: calls wait for it, then each key is paced as it was, not sent unlimited", async () => {
  const daemon = await startDaemon('[keys."openai/gone"]\nrequests_per_minute = 600\n');
  const provider = await Provider.start("--rpm", "600", "--burst-requests", "10", "--completion-tokens", "4");
  const client = new Client({ socket: daemon.socket });
  try {
    await sleep(1100);
    const oa = new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "test", fetch: limitedFetch({ client, key: "openai/{model}" }), maxRetries: 0 });
    const ends = [];
    const errors = [];
    const stop = Date.now() + 11_000;
    const worker = async () => {
      while (Date.now() < stop) {
        try {
          await oa.chat.completions.create({ model: "gone", messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
        } catch (e) {
          errors.push(`${e} (${e.cause ?? ""})`);
        }
        ends.push(Date.now());
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await sleep(2000);
    const exited = new Promise((r) => daemon.proc.once("exit", r));
    daemon.proc.kill("SIGKILL");
    await exited;
    daemon.proc = null;
    const gone = Date.now();
    await Promise.all(workers);
    const paced = ends.filter((t) => t > gone + 5500);
    const rate = paced.length / ((stop - gone - 5500) / 1000);
    console.log(`# after the wait: ${rate.toFixed(1)} calls/s paced (the limit: 10/s); ${errors.length} errors: ${errors[0] ?? ""}`);
    assert.ok(paced.length > 0, "calls went on, paced, after the wait");
    assert.ok(rate < 15, `paced near the rate the client was getting, not unlimited: ${rate}`);
    assert.ok(((await provider.stats()).responses["429"] ?? 0) <= 5);
    assert.deepEqual(errors, []);
  } finally {
    client.close();
    provider.close();
    await daemon.close();
  }
});

test("a lease granted before a restart is reported as lost, not as a mistake", async () => {
  const daemon = await startDaemon();
  const client = new Client({ socket: daemon.socket });
  try {
    const lease = await client.acquire("restart/lost", { inputTokens: 10, outputTokens: 5 });
    // Killed: the lease was granted and never snapshotted as settled; the new daemon does not know it.
    const exited = new Promise((r) => daemon.proc.once("exit", r));
    daemon.proc.kill("SIGKILL");
    await exited;
    daemon.proc = null;
    await sleep(200);
    await daemon.start();
    await client.waitConnected(5000);
    const advice = await lease.report({ status: 200, inputTokens: 10, outputTokens: 5 });
    assert.equal(advice.action, "done", JSON.stringify(advice));
  } finally {
    client.close();
    await daemon.close();
  }
});
