// limitedFetch on the clouds' paths, against the real daemon and the fake provider's Bedrock,
// Vertex AI and Gemini APIs: the model read from the path (conformance/paths.json), Bedrock's
// streamed answer read from its AWS event-stream frames for the usage, token counting untouched.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { Client, EventWatcher, limitedFetch } from "../dist/index.js";
import { Provider, startDaemon, waitUntil } from "./harness.mjs";

let daemon;
let client;
let provider;

before(async () => {
  daemon = await startDaemon();
  client = new Client({ socket: daemon.socket, failMode: "closed" });
  provider = await Provider.start("--cache-share", "0.5", "--completion-tokens", "12", "--rpm", "100000");
});

after(async () => {
  client.close();
  provider.close();
  await daemon.close();
});

const post = (body) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const claude = { anthropic_version: "bedrock-2023-05-31", max_tokens: 32, messages: [{ role: "user", content: "Say something short. ".repeat(8) }] };

async function settledAt(key, tokens) {
  await waitUntil(() => {
    const k = daemon.key(key);
    return k && Number(k.tokens_used) === tokens && Number(k.tokens_outstanding) === 0 && k.in_flight === 0;
  }, 5_000, `${key} settled at ${tokens}: ${JSON.stringify(daemon.key(key))}`);
}

async function providerTokens() {
  const s = await provider.stats();
  return Number(s.input_tokens) + Number(s.output_tokens);
}

test("Bedrock: the model from the path, plain and streamed answers settled at the provider's usage", async () => {
  await provider.reset();
  const f = limitedFetch({ client, key: "bedrock/{model}" });
  const model = encodeURIComponent("anthropic.claude-fake-v1:0");
  const plain = await f(`${provider.url}/model/${model}/invoke`, post(claude));
  assert.equal(plain.status, 200);
  assert.equal((await plain.json()).type, "message");
  const key = "bedrock/anthropic.claude-fake-v1:0";
  await settledAt(key, await providerTokens());
  const streamed = await f(`${provider.url}/model/${model}/invoke-with-response-stream`, post(claude));
  assert.equal(streamed.headers.get("content-type"), "application/vnd.amazon.eventstream");
  const bytes = new Uint8Array(await streamed.arrayBuffer());
  assert.ok(bytes.length > 100);
  await settledAt(key, await providerTokens());
});

test("Vertex AI: Claude's rawPredict and Gemini's stream limited on the path's model; count-tokens is not", async () => {
  await provider.reset();
  const f = limitedFetch({ client, key: "vertex/{model}" });
  const base = `${provider.url}/v1/projects/p-1/locations/us-east5/publishers`;
  const body = { ...claude, anthropic_version: "vertex-2023-10-16" };
  const r = await f(`${base}/anthropic/models/claude-x@20250929:rawPredict`, post(body));
  assert.equal(r.status, 200);
  await r.json();
  await settledAt("vertex/claude-x@20250929", await providerTokens());
  const counted = await f(`${base}/anthropic/models/count-tokens:rawPredict`, post(body));
  assert.ok((await counted.json()).input_tokens > 0);
  assert.equal(daemon.key("vertex/count-tokens"), undefined, "token counting was limited");
  const before = await providerTokens();
  const g = await f(`${base}/google/models/gemini-x:streamGenerateContent?alt=sse`, post({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }));
  assert.match(await g.text(), /usageMetadata/);
  await settledAt("vertex/gemini-x", (await providerTokens()) - before);
});

/** One AWS event-stream message (string headers only). */
function frame(headers, payload) {
  const raw = Buffer.concat(
    headers.map(([n, v]) => Buffer.concat([Buffer.from([n.length]), Buffer.from(n), Buffer.from([7]), Buffer.from([v.length >> 8, v.length & 255]), Buffer.from(v)])),
  );
  const total = 12 + raw.length + payload.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(raw.length, 4);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(prelude));
  const head = Buffer.concat([prelude, crc, raw, payload]);
  const end = Buffer.alloc(4);
  end.writeUInt32BE(zlib.crc32(head));
  return Buffer.concat([head, end]);
}

const chunk = (event) =>
  frame([[":message-type", "event"], [":event-type", "chunk"]], Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString("base64") })));

test("event-stream frames are read split anywhere; a metrics-only model is settled at its metrics; a bad frame stops the watching", () => {
  const metricsOnly = Buffer.concat([
    chunk({ generation: "tok tok" }),
    chunk({ "amazon-bedrock-invocationMetrics": { inputTokenCount: 7, outputTokenCount: 2 } }),
  ]);
  const bytewise = new EventWatcher("application/vnd.amazon.eventstream");
  for (const b of metricsOnly) {
    bytewise.feed(Uint8Array.of(b));
  }
  assert.deepEqual(bytewise.finish().usage, [7, 0, 2]);
  const throttled = frame([[":message-type", "exception"], [":exception-type", "throttlingException"]], Buffer.from('{"message":"Too many tokens"}'));
  const w = new EventWatcher("application/vnd.amazon.eventstream");
  w.feed(Buffer.concat([chunk({ type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } }), throttled]));
  const o = w.finish();
  assert.deepEqual([o.errorType, o.errorMessage], ["throttlingException", "Too many tokens"]);
  assert.deepEqual(o.usage, [5, 0, 1]);
  const bad = Buffer.from(metricsOnly);
  bad[20] ^= 0xff;
  const broken = new EventWatcher("application/vnd.amazon.eventstream");
  broken.feed(bad);
  assert.equal(broken.finish().usage, null);
});
