// Callers that give up: an AbortSignal fired while an acquire waits, just as the slot it waits
// for frees (some granted as they go), leaves nothing held, and is never taken for a refusal.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { Client } from "../dist/index.js";
import { startDaemon, waitUntil } from "./harness.mjs";

let daemon;
let client;

before(async () => {
  daemon = await startDaemon('[keys."node/one"]\nmax_concurrency = 1\n');
  client = new Client({ socket: daemon.socket, failMode: "closed" });
});

after(async () => {
  client.close();
  await daemon.close();
});

async function key(name) {
  const st = await client.status();
  return st.keys.find((k) => k.key === name);
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
