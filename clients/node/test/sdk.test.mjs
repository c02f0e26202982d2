// The real openai and @anthropic-ai/sdk packages through limitedFetch against the fake provider:
// usage settled, plain and streamed, and a 429 retried on the daemon's advice.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { Client, limitedFetch } from "../dist/index.js";
import { Provider, startDaemon, waitUntil } from "./harness.mjs";

const MESSAGES = [{ role: "user", content: "Say hello to the people who keep the quota." }];
let daemon;
let provider;
let client;

before(async () => {
  daemon = await startDaemon();
  provider = await Provider.start();
  client = new Client({ socket: daemon.socket, failMode: "closed" });
});

after(async () => {
  client.close();
  provider.close();
  await daemon.close();
});

function openai(key) {
  return new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "test", fetch: limitedFetch({ client, key }), maxRetries: 0 });
}

function anthropic(key) {
  return new Anthropic({ baseURL: provider.url, apiKey: "test", fetch: limitedFetch({ client, key }), maxRetries: 0 });
}

/** Waits until every lease on `key` is settled, and returns what the daemon counted. */
async function settled(key, requests) {
  await waitUntil(() => {
    const k = daemon.key(key);
    return k && k.granted_total === requests && k.tokens_outstanding === 0 && k.in_flight === 0;
  }, 10_000, `${requests} settled leases on ${key}`);
  return daemon.key(key);
}

test("openai: a plain call settles at its usage", async () => {
  const r = await openai("openai/plain").chat.completions.create({ model: "gpt-test", messages: MESSAGES, max_tokens: 64 });
  assert.ok(r.choices[0].message.content);
  const k = await settled("openai/plain", 1);
  assert.equal(k.tokens_used, r.usage.prompt_tokens + r.usage.completion_tokens);
});

test("openai: a streamed call is reported when its last chunk went by, with its usage", async () => {
  const stream = await openai("openai/stream").chat.completions.create({
    model: "gpt-test",
    messages: MESSAGES,
    max_tokens: 64,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    usage = chunk.usage ?? usage;
  }
  assert.ok(text && usage);
  const k = await settled("openai/stream", 1);
  assert.equal(k.tokens_used, usage.prompt_tokens + usage.completion_tokens);
});

test("anthropic: plain and streamed calls settle at their usage", async () => {
  const an = anthropic("anthropic/sdk");
  const m = await an.messages.create({ model: "claude-test", max_tokens: 64, messages: MESSAGES });
  const stream = an.messages.stream({ model: "claude-test", max_tokens: 64, messages: MESSAGES });
  let text = "";
  stream.on("text", (t) => {
    text += t;
  });
  const final = await stream.finalMessage();
  assert.ok(text);
  const k = await settled("anthropic/sdk", 2);
  const used = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + u.output_tokens;
  assert.equal(k.tokens_used, used(m.usage) + used(final.usage));
});

test("a 429 is retried on the daemon's advice, and the key cools for everyone", async () => {
  await provider.faults(["rate_limit,retry_after=1,count=1"]);
  const started = Date.now();
  const r = await openai("openai/limited").chat.completions.create({ model: "gpt-test", messages: MESSAGES, max_tokens: 16 });
  assert.ok(r.choices[0].message.content);
  assert.ok(Date.now() - started >= 900, "retried before the provider's retry-after");
  const k = await settled("openai/limited", 2);
  assert.equal(k.rate_limited_total, 1);
  assert.equal(k.retries_total, 1);
});

test("a 400 goes to the SDK as it came, reported and not retried", async () => {
  await provider.faults(["status=400,count=1"]);
  await assert.rejects(
    openai("openai/bad").chat.completions.create({ model: "gpt-test", messages: MESSAGES, max_tokens: 16 }),
    (e) => e.status === 400,
  );
  const k = await settled("openai/bad", 1);
  assert.equal(k.give_ups_total, 1);
});
