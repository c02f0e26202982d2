// Mistakes that would cost a caller its limiting without a word: a key template with a typo
// (refused when limitedFetch is built), a stopping daemon under fail-open (the call proceeds),
// and a NotGranted wrapped by an SDK (isNotGranted looks through .cause).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { Client, NotGranted, isNotGranted, limitedFetch } from "../dist/index.js";
import { startDaemon, waitUntil } from "./harness.mjs";

test("a key template with a typo fails when limitedFetch is built", () => {
  const client = new Client({ socket: "/nonexistent/llmctl.sock" });
  for (const [key, word] of [
    ["openai/{modle}", "{modle}"],
    ["openai//x", "empty segment"],
    ["openai/{model}/{region}", "{region}"],
    ["openai/{model", "lone brace"],
    ["openai/\u200bgpt", "invisible"],
  ]) {
    assert.throws(() => limitedFetch({ client, key }), (e) => e instanceof TypeError && e.message.includes(word), key);
  }
  assert.equal(typeof limitedFetch({ client, key: "openai/{model}" }), "function");
  client.close();
});

test("{model} in the key is the request's model", async () => {
  const daemon = await startDaemon();
  const client = new Client({ socket: daemon.socket, failMode: "closed" });
  try {
    const fetch = limitedFetch({
      client,
      key: "openai/{model}",
      fetch: async () => new Response(JSON.stringify({ usage: { prompt_tokens: 3, completion_tokens: 2 } }), { status: 200 }),
    });
    const r = await fetch("http://127.0.0.1:9/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "gpt-x", messages: [{ role: "user", content: "hi" }], max_tokens: 5 }),
    });
    assert.equal(r.status, 200);
    assert.equal(client.limited, true);
    await waitUntil(() => daemon.key("openai/gpt-x")?.granted_total === 1, 5000, "the grant on openai/gpt-x");
  } finally {
    client.close();
    await daemon.close();
  }
});

test("isNotGranted finds a NotGranted inside the errors an SDK wraps it in", () => {
  const refused = new NotGranted("k", "cooling down", "cooldown", null, 0);
  assert.ok(isNotGranted(refused));
  const wrapped = Object.assign(new Error("Connection error."), { cause: refused });
  assert.ok(isNotGranted(wrapped));
  assert.ok(!isNotGranted(new Error("other")));
  assert.ok(!isNotGranted(undefined));
});

test("a call waiting while the daemon stops proceeds when failing open, and is refused when failing closed", async () => {
  const daemon = await startDaemon();
  const open = new Client({ socket: daemon.socket });
  const closed = new Client({ socket: daemon.socket, failMode: "closed" });
  try {
    assert.equal(daemon.cli("cooldown", "k", "30s").status, 0);
    const waiting = [open.acquire("k", { maxWait: 60_000 }), closed.acquire("k", { maxWait: 60_000 })].map((p) =>
      p.then(
        (lease) => ({ lease }),
        (error) => ({ error }),
      ),
    );
    await waitUntil(() => daemon.key("k")?.queue_depth === 2, 10_000, "both calls to wait in the daemon");
    await daemon.stop();
    const [o, c] = await Promise.all(waiting);
    assert.ok(o.lease && !o.lease.limited, String(o.error ?? o.lease?.limited));
    assert.equal(open.limited, false, "the client says its last call went unlimited");
    assert.ok(c.error instanceof NotGranted && c.error.reasonCode === "stopping", String(c.error));
  } finally {
    open.close();
    closed.close();
    await daemon.close();
  }
});
