// A chat stream whose caller did not ask for its usage: limitedFetch asks for it, settles at
// it, and hands the SDK the stream it would have had; an upstream that refuses the option is
// asked once (conformance/stream_usage.json).

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import OpenAI from "openai";
import { Client, limitedFetch } from "../dist/index.js";
import { Provider, startDaemon, waitUntil } from "./harness.mjs";

const MESSAGES = [{ role: "user", content: "Say hello to the people who keep the quota." }];
let daemon;
let client;

before(async () => {
  daemon = await startDaemon();
  client = new Client({ socket: daemon.socket, failMode: "closed" });
});

after(async () => {
  client.close();
  await daemon.close();
});

function openai(provider) {
  return new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "test", fetch: limitedFetch({ client, key: "openai/{model}" }), maxRetries: 0 });
}

async function chunks(oa, model) {
  const out = [];
  for await (const c of await oa.chat.completions.create({ model, messages: MESSAGES, stream: true })) {
    out.push(c);
  }
  return out;
}

test("a stream that did not ask is settled at its usage and shows the caller none", async () => {
  const provider = await Provider.start("--completion-tokens", "9");
  try {
    const got = await chunks(openai(provider), "gpt-nu");
    assert.ok(got.length > 0 && got.every((c) => c.choices.length > 0 && c.usage === undefined), JSON.stringify(got.at(-1)));
    const s = await provider.stats();
    const used = s.input_tokens + s.output_tokens;
    await waitUntil(() => {
      const k = daemon.key("openai/gpt-nu");
      return k && k.tokens_outstanding === 0 && k.tokens_used === used;
    }, 10_000, `openai/gpt-nu settled at the provider's ${used} tokens`);
    assert.equal(daemon.key("openai/gpt-nu").settled_at_estimate_total, 0);
  } finally {
    provider.close();
  }
});

test("a refusal of the caller's own stream_options does not stop asking the upstream", async () => {
  const provider = await Provider.start("--refuse-stream-options");
  try {
    const oa = openai(provider);
    await assert.rejects(
      oa.chat.completions.create({ model: "gpt-own", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_obfuscation: false } }),
      (e) => e.status === 400,
    );
    assert.equal((await provider.stats()).responses["400"], 2, "asked with the option, then as the caller wrote it");
    await chunks(oa, "gpt-own");
    const { responses } = await provider.stats();
    assert.deepEqual([responses["400"], responses["200"]], [3, 1], "the next stream was asked for its usage");
  } finally {
    provider.close();
  }
});

test("an upstream refusing stream_options is asked once, then never", async () => {
  const provider = await Provider.start("--refuse-stream-options");
  try {
    const oa = openai(provider);
    for (let i = 0; i < 2; i++) {
      const got = await chunks(oa, "gpt-rf");
      assert.ok(got.some((c) => c.choices[0]?.delta?.content));
    }
    const { responses } = await provider.stats();
    assert.deepEqual([responses["400"], responses["200"]], [1, 2]);
    await waitUntil(() => daemon.key("openai/gpt-rf")?.settled_at_estimate_total === 2, 10_000, "status to count both at the estimate");
  } finally {
    provider.close();
  }
});
