// limitedFetch at its edges, against the real daemon and a small provider of the test's own:
// a cancelled stream, an abort while waiting, a daemon gone before the report.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as http from "node:http";
import { Client, InvalidArgument, Lease, limitedFetch } from "../dist/index.js";
import { startDaemon, waitUntil } from "./harness.mjs";

let daemon;
let client;
let server;
let url;
let sent = 0;

before(async () => {
  daemon = await startDaemon();
  client = new Client({ socket: daemon.socket, failMode: "closed" });
  // Streams an event every 100 ms, 30 in all, and counts what it sent.
  server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    let n = 0;
    const t = setInterval(() => {
      if (n === 30 || res.destroyed) {
        clearInterval(t);
        res.end();
        return;
      }
      n += 1;
      sent += 1;
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `word ${n}` } }] })}\n\n`);
    }, 100);
    req.on("close", () => clearInterval(t));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${server.address().port}/v1/chat/completions`;
});

after(async () => {
  client.close();
  server.close();
  await daemon.close();
});

const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 50, stream: true });

test("a stream the caller cancels is cancelled at the provider and reported once", async () => {
  const f = limitedFetch({ client, key: "node/cancel" });
  const res = await f(url, { method: "POST", body });
  const reader = res.body.getReader();
  assert.equal((await reader.read()).done, false);
  const before = sent;
  const started = Date.now();
  await reader.cancel();
  assert.ok(Date.now() - started < 1_000, "cancel waited for the provider's stream to end");
  await waitUntil(() => {
    const k = daemon.key("node/cancel");
    return k && k.granted_total === 1 && k.in_flight === 0 && k.tokens_outstanding === 0;
  }, 5_000, "the lease to be reported");
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(sent - before <= 2, `the provider went on streaming: ${sent - before} more events`);
});

test("a report says when its answer came, not when its body was read", async () => {
  // A window the provider keeps frees a request's place a second after its answer: a body
  // that takes long to come (or a busy caller) must not make that later.
  const stamps = [];
  const report = Lease.prototype.report;
  Lease.prototype.report = function (o) {
    stamps.push(o?.answeredUnixMs);
    return report.call(this, o);
  };
  // Headers at once, the JSON body 300 ms later.
  const slow = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    setTimeout(() => res.end(JSON.stringify({ usage: { prompt_tokens: 3, completion_tokens: 2 } })), 300);
  });
  await new Promise((r) => slow.listen(0, "127.0.0.1", r));
  try {
    const start = Date.now();
    const streamed = await limitedFetch({ client, key: "node/answered" })(url, { method: "POST", body });
    const returned = Date.now();
    await streamed.text();
    assert.equal(stamps.length, 1);
    assert.ok(start <= stamps[0] && stamps[0] <= returned, `${stamps} not in ${start}..${returned}`);
    const slowUrl = `http://127.0.0.1:${slow.address().port}/v1/chat/completions`;
    const plainStart = Date.now();
    await limitedFetch({ client, key: "node/answered" })(slowUrl, { method: "POST", body: "{}" });
    assert.equal(stamps.length, 2);
    assert.ok(
      plainStart <= stamps[1] && stamps[1] <= plainStart + 250,
      `${stamps[1]}: stamped when the body was read, not when the answer came (${plainStart})`,
    );
  } finally {
    Lease.prototype.report = report;
    slow.close();
  }
});

test("an abort while waiting in the daemon rejects at once and leaves the queue", async () => {
  await client.cooldown("node/waiting", 5_000, "test");
  const f = limitedFetch({ client, key: "node/waiting" });
  const started = Date.now();
  await assert.rejects(f(url, { method: "POST", body, signal: AbortSignal.timeout(300) }), (e) => e.name === "TimeoutError");
  assert.ok(Date.now() - started < 2_000, `the abort took ${Date.now() - started} ms`);
  await waitUntil(() => daemon.key("node/waiting").queue_depth === 0, 2_000, "the waiter to leave the queue");
});

test("a daemon gone before the report does not cost the caller the provider's answer", async () => {
  const other = await startDaemon();
  const c = new Client({ socket: other.socket, failMode: "closed" });
  try {
    const inner = async () => {
      await other.stop();
      return new Response(JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: 1 } }), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    };
    const res = await limitedFetch({ client: c, key: "node/gone", fetch: inner })(url, { method: "POST", body: "{}" });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { usage: { prompt_tokens: 1, completion_tokens: 1 } });
  } finally {
    c.close();
    await other.close();
  }
});

test("a report with a mistake in it is refused and the lease can still be reported", async () => {
  const lease = await client.acquire("node/fix");
  await assert.rejects(lease.report({ status: 200, inputTokens: 1.5 }), InvalidArgument);
  assert.equal((await lease.report({ status: 200, inputTokens: 2 })).action, "done");
  await assert.rejects(client.acquire("node/fix", { firstAttempt: 1_700_000_000 }), /Unix milliseconds/);
  assert.throws(() => new Client({ socket: daemon.socket, clientId: "x".repeat(300) }), InvalidArgument);
});
