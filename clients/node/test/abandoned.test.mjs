// Callers that give up (conformance/giving_up.json, the rows of the road "node"): each way of
// giving up settles at once as the table says, leaves nothing held, and is never a refusal.
// And a burst of aborts fired just as the slot they wait for frees (some granted as they go).

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import { Client, limitedFetch } from "../dist/index.js";
import { Provider, ROOT, startDaemon, waitUntil } from "./harness.mjs";

// Drops are settled when the collector finds them: the tests run it while they wait.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const TABLE = JSON.parse(fs.readFileSync(path.join(ROOT, "conformance/giving_up.json"), "utf8"));

let daemon;
let client;
let provider;

before(async () => {
  // One slot on each key, so that an acquire behind a held lease waits.
  const keys = ["node/one", ...TABLE.cases.filter((c) => c.road === "node").map((c) => `node/gu/${c.way}`)];
  daemon = await startDaemon(keys.map((k) => `[keys."${k}"]\nmax_concurrency = 1\n`).join(""));
  client = new Client({ socket: daemon.socket, failMode: "closed" });
  provider = await Provider.start("--latency", "3s");
});

after(async () => {
  client.close();
  provider.close();
  await daemon.close();
});

async function key(name) {
  const st = await client.status();
  return st.keys.find((k) => k.key === name);
}

const counters = (k) => ({
  cancelled: Number(k?.cancelledTotal ?? 0),
  settled: Number(k?.settledTotal ?? 0),
  withdrawn: Number(k?.withdrawnTotal ?? 0),
});

/** Each way of giving up, on its own key, with one lease held so that an acquire waits. */
const WAYS = {
  async abort_while_waiting(name) {
    const held = await client.acquire(name);
    const c = new AbortController();
    const waiting = client.acquire(name, { maxWait: 30_000, signal: c.signal });
    await waitUntil(async () => Number((await key(name)).queueDepth) === 1, 5_000, "the wait queued");
    c.abort(new Error("the user gave up"));
    await assert.rejects(waiting, /gave up/);
    // Withdrawn before the held lease frees the slot (else the grant crosses the withdrawal and
    // is given back: a lease withdrawn, not a wait).
    await waitUntil(async () => Number((await key(name)).queueDepth) === 0, 5_000, "the wait withdrawn");
    return held;
  },
  async abort_fetch_while_upstream_works(name) {
    const c = new AbortController();
    const body = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    const answer = limitedFetch({ client, key: name })(`${provider.url}/v1/chat/completions`, { method: "POST", body, signal: c.signal });
    await waitUntil(async () => Number((await key(name))?.inFlight ?? 0) === 1, 5_000, "the request sent");
    c.abort(new Error("the user gave up"));
    await assert.rejects(answer);
    return null;
  },
  async drop_acquire_promise(name) {
    void client.acquire(name);
    await waitUntil(async () => Number((await key(name))?.inFlight ?? 0) === 1, 5_000, "granted");
    return null;
  },
  async drop_lease_unreported(name) {
    const lease = await client.acquire(name);
    assert.ok(lease.leaseId);
    return null;
  },
  async drop_response_unread(name) {
    const body = JSON.stringify({ model: "m", stream: true, max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    const res = await limitedFetch({ client, key: name })(`${provider.url}/v1/chat/completions`, { method: "POST", body });
    assert.equal(res.status, 200);
    assert.equal(Number((await key(name)).inFlight), 1, "held while its body is unread");
    return null;
  },
};

for (const row of TABLE.cases.filter((c) => c.road === "node")) {
  test(`giving_up.json: ${row.name}`, async () => {
    const name = `node/gu/${row.way}`;
    assert.ok(WAYS[row.way], `no runner for ${row.way}`);
    // A lease the way holds (so that its acquire waits) counts as settled once reported.
    const held = await WAYS[row.way](name);
    const heldSettled = held ? 1 : 0;
    if (held) await held.report({ status: 200 });
    const want = {
      withdrawn_wait: { cancelled: 1, settled: heldSettled, withdrawn: 0 },
      given_back: { cancelled: 1, settled: heldSettled, withdrawn: 1 },
      reported_cancelled: { cancelled: 1, settled: heldSettled + 1, withdrawn: 0 },
    }[row.settles];
    await waitUntil(
      async () => {
        gc();
        const k = await key(name);
        return Number(k.inFlight) === 0 && Number(k.queueDepth) === 0 && Number(k.tokensOutstanding) === 0 && JSON.stringify(counters(k)) === JSON.stringify(want);
      },
      5_000,
      `${row.name}: settled as ${row.settles} (${JSON.stringify(want)})`,
    );
    const k = await key(name);
    assert.equal(Number(k.rateLimitedTotal), 0, "a cancel is not a refusal");
    assert.equal(Number(k.rejectedTotal), 0, "a cancel is not a refusal");
    assert.equal(k.grantedTotal, k.settledTotal + k.withdrawnTotal);
  });
}

test("acquires aborted as their slot frees hold nothing, and the ledger balances", async () => {
  for (let round = 0; round < 4; round++) {
    const held = await client.acquire("node/one");
    const controllers = [];
    const waiting = [];
    for (let i = 0; i < 6; i++) {
      const c = new AbortController();
      controllers.push(c);
      waiting.push(client.acquire("node/one", { maxWait: 30_000, signal: c.signal }));
    }
    await waitUntil(async () => Number((await key("node/one")).queueDepth) === 6, 5_000, "the waits queued");
    await held.report({ status: 200 });
    for (const c of controllers) c.abort(new Error("the user gave up"));
    const results = await Promise.allSettled(waiting);
    for (const r of results) {
      // A grant that reached its caller before the abort is the caller's own.
      if (r.status === "fulfilled") await r.value.report({ status: 200 });
      else assert.match(String(r.reason), /gave up/);
    }
    await waitUntil(
      async () => {
        const k = await key("node/one");
        return Number(k.inFlight) === 0 && Number(k.queueDepth) === 0;
      },
      5_000,
      `round ${round}: nothing held`,
    );
  }
  await waitUntil(
    async () => {
      const k = await key("node/one");
      return k.grantedTotal === k.settledTotal + k.withdrawnTotal;
    },
    5_000,
    "every grant settled or withdrawn",
  );
  const k = await key("node/one");
  assert.ok(Number(k.cancelledTotal) >= 4 * 5, `cancelled ${k.cancelledTotal}`);
  assert.equal(Number(k.rejectedTotal), 0, "a cancel is not a refusal");
});
