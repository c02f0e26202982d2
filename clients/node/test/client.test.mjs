// The client against the real daemon: every call, refusals, fail-open and closed.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { Client, InvalidArgument, Lease, LeaseNotFound, NotGranted, RunBudgetExceeded, Unavailable, defaultSocket } from "../dist/index.js";
import { startDaemon } from "./harness.mjs";

let daemon;
let client;

before(async () => {
  daemon = await startDaemon('[keys."node/k"]\nrequests_per_minute = 600\nburst_requests = 10\n');
  client = new Client({ socket: daemon.socket, failMode: "closed" });
});

after(async () => {
  client.close();
  await daemon.close();
});

test("acquire, report and status", async () => {
  assert.equal(await client.waitConnected(10_000), true);
  const lease = await client.acquire("node/free", { inputTokens: 100, outputTokens: 50 });
  assert.equal(lease.limited, true);
  assert.equal(lease.key, "node/free");
  assert.match(lease.leaseId, /^[0-9a-f]{32}$/);
  const advice = await lease.report({ status: 200, inputTokens: 90, outputTokens: 40, headers: { "x-ratelimit-remaining-requests": "99", "x-other": "no" } });
  assert.deepEqual(advice, { action: "done", retryAfterMs: 0, fallbackKey: "", reason: advice.reason });
  const st = await client.status();
  const k = st.keys.find((x) => x.key === "node/free");
  assert.equal(Number(k.tokensUsed), 130);
  assert.ok(st.sessions >= 1);
  await assert.rejects(lease.report({ status: 200 }), /reported already/);
});

test("a cooldown refuses at once with notBefore and the reason", async () => {
  const until = await client.cooldown("node/cool", 5_000, "maintenance");
  assert.ok(until instanceof Date && until.getTime() > Date.now() + 4_000);
  const err = await client.acquire("node/cool/model", { maxWait: 1_000 }).catch((e) => e);
  assert.ok(err instanceof NotGranted, String(err));
  assert.equal(err.reasonCode, "cooldown");
  assert.match(err.reason, /maintenance/);
  assert.ok(err.notBefore instanceof Date && Math.abs(err.notBefore.getTime() - until.getTime()) < 1_000);
  assert.ok(err.retryAfterMs > 3_000);
});

test("maxWait 0 answers at once when the bucket is empty", async () => {
  for (let i = 0; i < 30; i++) {
    // When the bucket is a hair short, notBefore is within a millisecond: it is no earlier
    // than the moment of asking (whole milliseconds), not later than whenever it is looked at.
    const asked = Date.now();
    try {
      await client.acquire("node/k", { maxWait: 0 });
    } catch (e) {
      assert.ok(e instanceof NotGranted);
      assert.equal(e.reasonCode, "capacity");
      assert.ok(e.notBefore.getTime() >= asked, `${e.notBefore.toISOString()} before ${asked}`);
      return;
    }
  }
  assert.fail("30 grants from a bucket of 10");
});

test("a run past its budget throws RunBudgetExceeded", async () => {
  assert.equal(daemon.cli("run-budget", "node-run", "--max-calls", "1").status, 0);
  await (await client.acquire("node/free", { runId: "node-run" })).report({ status: 200 });
  const err = await client.acquire("node/free", { runId: "node-run" }).catch((e) => e);
  assert.ok(err instanceof RunBudgetExceeded, String(err));
  assert.equal(err.runId, "node-run");
  assert.equal(err.reasonCode, "run_budget");
});

test("claims: one winner, then the stored result", async () => {
  assert.deepEqual(await client.claim("node-job", { ttlMs: 60_000 }), { state: "claimed" });
  const other = await client.claim("node-job");
  assert.equal(other.state, "pending");
  assert.ok(other.since instanceof Date);
  await client.complete("node-job", "result 42");
  const done = await client.claim("node-job");
  assert.equal(done.state, "done");
  assert.equal(new TextDecoder().decode(done.result), "result 42");
});

test("bad input is refused with what was wrong", async () => {
  await assert.rejects(client.acquire("", {}), (e) => e instanceof InvalidArgument && /key is empty/.test(e.message));
  await assert.rejects(client.acquire("node/x", { inputTokens: -1 }), InvalidArgument);
  await assert.rejects(client.acquire("node/x", { maxWait: 5_000_000 }), /maxWait is in milliseconds/);
  const lease = await client.acquire("node/x");
  await assert.rejects(lease.report({ status: 1000 }), InvalidArgument);
  const unknown = new Lease(client, "node/x", "0".repeat(32), true, 0, null, 1, 0);
  await assert.rejects(unknown.report({ status: 200 }), (e) => e instanceof LeaseNotFound && e.code === "NOT_FOUND");
});

test("without a daemon: fail-open grants unlimited leases, fail-closed throws Unavailable", async () => {
  const socket = `${daemon.dir}/nobody.sock`;
  const open = new Client({ socket });
  const lease = await open.acquire("node/k", { inputTokens: 10 });
  assert.equal(lease.limited, false);
  assert.equal((await lease.report({ status: 200 })).action, "done");
  const retry = await (await open.acquire("node/k")).report({ status: 429, headers: { "retry-after": "2" } });
  assert.equal(retry.action, "retry");
  assert.ok(retry.retryAfterMs >= 2_000);
  open.close();
  const closed = new Client({ socket, failMode: "closed" });
  await assert.rejects(closed.acquire("node/k"), (e) => e instanceof Unavailable && e.socket === socket);
  closed.close();
});

test("fail-open: once the daemon stops, leases are granted unlimited and advice is local", async () => {
  const other = await startDaemon();
  const c = new Client({ socket: other.socket });
  try {
    assert.equal((await c.acquire("node/k")).limited, true);
    await other.stop();
    const lease = await c.acquire("node/k", { inputTokens: 10 });
    assert.equal(lease.limited, false);
    assert.equal((await lease.report({ status: 200 })).action, "done");
    const closed = new Client({ socket: other.socket, failMode: "closed" });
    await assert.rejects(closed.acquire("node/k"), Unavailable);
    closed.close();
  } finally {
    c.close();
    await other.close();
  }
});

test("a daemon refusing its streams (REFUSED_STREAM, as one that is stopping does) is an unreachable one", async () => {
  // A stopping daemon's HTTP/2 server refuses the streams that raced its GOAWAY: none was
  // processed, so each is as if the daemon was not there, never an error for the caller.
  const socket = `${daemon.dir}/refusing.sock`;
  const server = http2.createServer();
  const sessions = new Set();
  server.on("session", (s) => sessions.add(s));
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
  });
  await new Promise((r) => server.listen(socket, r));
  const open = new Client({ socket });
  const closed = new Client({ socket, failMode: "closed" });
  try {
    const lease = await open.acquire("node/k", { inputTokens: 10 });
    assert.equal(lease.limited, false);
    await assert.rejects(closed.acquire("node/k"), (e) => e instanceof Unavailable && /REFUSED_STREAM/.test(e.message));
  } finally {
    open.close();
    closed.close();
    for (const s of sessions) s.destroy();
    await new Promise((r) => server.close(r));
  }
});

test("the socket is searched as the daemon searches it", () => {
  assert.equal(defaultSocket({ LLMCTL_SOCKET: "/x/y.sock", XDG_RUNTIME_DIR: "/run/u" }), "/x/y.sock");
  assert.equal(defaultSocket({ XDG_RUNTIME_DIR: "/run/user/7" }), "/run/user/7/llmctl/llmctl.sock");
  assert.equal(defaultSocket({}), `/tmp/llmctl-${process.getuid()}/llmctl.sock`);
});
