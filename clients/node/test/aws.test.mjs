// The AWS SDK v3's BedrockRuntimeClient through `aws.limit`, against the real daemon and the
// fake provider's Bedrock API: every model call limited and settled at the provider's usage
// (Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream), the SDK's own retries
// replaced by the daemon's advice, a lease not granted thrown as Bedrock's own throttle.

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import { fileURLToPath } from "node:url";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ListAsyncInvokesCommand,
} from "@aws-sdk/client-bedrock-runtime";
import { Client, aws } from "../dist/index.js";
import { Provider, startDaemon, waitUntil } from "./harness.mjs";

// A stream dropped unread is settled when the collector finds it: the tests run it.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const MODEL = "anthropic.claude-fake-v1:0";
const KEY = `bedrock/${MODEL}`;
const MESSAGES = [{ role: "user", content: [{ text: "Say something short about rate limits. ".repeat(5) }] }];

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

function bedrock(provider, config = {}) {
  return new BedrockRuntimeClient({
    endpoint: provider.url,
    region: "us-east-1",
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    ...config,
  });
}

async function providerTokens(provider) {
  const s = await provider.stats();
  return Number(s.input_tokens) + Number(s.output_tokens);
}

async function settledAt(key, tokens) {
  await waitUntil(() => {
    const k = daemon.key(key);
    return k && Number(k.tokens_used) === tokens && Number(k.tokens_outstanding) === 0 && k.in_flight === 0;
  }, 5_000, `${key} settled at ${tokens}: ${JSON.stringify(daemon.key(key))}`);
}

async function withProvider(args, f) {
  const provider = await Provider.start("--rpm", "100000", "--completion-tokens", "6", ...args);
  try {
    await f(provider);
  } finally {
    provider.close();
  }
}

test("Converse and ConverseStream are limited on the path's model and settled at the usage", async () => {
  await withProvider(["--cache-share", "0.5"], async (provider) => {
    const b = aws.limit(bedrock(provider), { client });
    assert.equal(aws.limit(b, { client }), b, "limited once however often it is asked");
    const r = await b.send(new ConverseCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 64 } }));
    assert.match(r.output.message.content[0].text, /^tok/);
    const u = r.usage;
    assert.equal(await providerTokens(provider), u.inputTokens + (u.cacheReadInputTokens ?? 0) + u.outputTokens);
    await settledAt(KEY, await providerTokens(provider));
    assert.equal(r.$metadata.attempts, 1);

    const s = await b.send(new ConverseStreamCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 64 } }));
    const events = [];
    for await (const e of s.stream) {
      events.push(e);
    }
    assert.ok("metadata" in events.at(-1), JSON.stringify(events.at(-1)));
    const text = events.filter((e) => e.contentBlockDelta).map((e) => e.contentBlockDelta.delta.text).join("");
    assert.match(text, /^tok/);
    await settledAt(KEY, await providerTokens(provider));

    // A stream left after its first event is reported then, at the estimate.
    const before = Number(daemon.key(KEY).granted_total);
    const left = await b.send(new ConverseStreamCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 64 } }));
    for await (const e of left.stream) {
      assert.ok(e);
      break;
    }
    await waitUntil(() => daemon.key(KEY).in_flight === 0 && Number(daemon.key(KEY).tokens_outstanding) === 0, 5_000, "the stream left early was reported");
    assert.equal(Number(daemon.key(KEY).granted_total), before + 1);
  });
});

test("a throttle inside a stream is reported as the 429 it is (conformance/bedrock_stream_errors.json), and a stream dropped unread frees its slot", async () => {
  await withProvider([], async (provider) => {
    const key = "bedrock/midstream";
    const b = aws.limit(bedrock(provider), { client, key, maxRetries: 0 });
    await provider.faults(["stream_error=throttlingException,after_tokens=2,count=1"]);
    const s = await b.send(new ConverseStreamCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 64 } }));
    await assert.rejects(async () => {
      for await (const e of s.stream) {
        assert.ok(e);
      }
    }, (e) => e.name === "ThrottlingException" || /throttl/i.test(String(e.name)));
    await waitUntil(() => daemon.key(key)?.in_flight === 0, 5_000, "the stream's attempt reported");
    assert.equal(Number(daemon.key(key).rate_limited_total), 1, JSON.stringify(daemon.key(key)));

    // A stream never iterated, then dropped: reported when it is collected, not at the TTL.
    const granted = Number(daemon.key(key).granted_total);
    await (async () => {
      const unread = await b.send(new ConverseStreamCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 64 } }));
      assert.ok(unread.stream);
    })();
    assert.equal(Number(daemon.key(key).granted_total), granted + 1);
    await waitUntil(() => {
      gc();
      return daemon.key(key).in_flight === 0;
    }, 10_000, "the unread stream's slot freed");
  });
});

test("InvokeModel and its stream are settled at their usage; {region} is the client's", async () => {
  await withProvider([], async (provider) => {
    const b = aws.limit(bedrock(provider), { client, key: "bedrock/{region}/{model}" });
    const body = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 32, messages: [{ role: "user", content: "hi there" }] });
    const r = await b.send(new InvokeModelCommand({ modelId: MODEL, body }));
    assert.equal(JSON.parse(new TextDecoder().decode(r.body)).type, "message");
    const key = `bedrock/us-east-1/${MODEL}`;
    await settledAt(key, await providerTokens(provider));
    const s = await b.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body }));
    const chunks = [];
    for await (const e of s.body) {
      chunks.push(JSON.parse(new TextDecoder().decode(e.chunk.bytes)));
    }
    assert.equal(chunks.at(-1).type, "message_stop");
    await settledAt(key, await providerTokens(provider));
  });
});

test("a throttle is retried on the daemon's advice, not the SDK's own schedule", async () => {
  await withProvider(["--fault", "rate_limit,count=1"], async (provider) => {
    const advices = [];
    const b = aws.limit(bedrock(provider), { client, onAdvice: (key, a) => advices.push([key, a]) });
    const before = Number(daemon.key(KEY)?.rate_limited_total ?? 0);
    const r = await b.send(new ConverseCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 16 } }));
    assert.equal(r.usage.outputTokens, 6);
    assert.deepEqual(advices.map(([k, a]) => [k, a.action]), [[KEY, "retry"], [KEY, "done"]]);
    // Retried once, after the daemon's delay, not the SDK's own backoff.
    assert.equal(r.$metadata.attempts, 2);
    assert.equal(r.$metadata.totalRetryDelay, advices[0][1].retryAfterMs);
    assert.ok(advices[0][1].retryAfterMs > 0);
    assert.deepEqual((await provider.stats()).responses, { 429: 1, 200: 1 });
    // The daemon counted the refusal on the key, for every process on the host.
    assert.equal(Number(daemon.key(KEY).rate_limited_total), before + 1);
  });
});

test("with maxRetries 0 a throttle is the caller's after one attempt (the SDK would try 3 times)", async () => {
  await withProvider(["--fault", "rate_limit"], async (provider) => {
    const b = aws.limit(bedrock(provider, { maxAttempts: 3 }), { client, maxRetries: 0 });
    await assert.rejects(
      b.send(new ConverseCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 16 } })),
      (e) => e.name === "ThrottlingException" && /Too many requests/.test(e.message),
    );
    assert.deepEqual((await provider.stats()).responses, { 429: 1 });
  });
});

test("a lease not granted in time is Bedrock's own ThrottlingException, and nothing is sent", async () => {
  const d = await startDaemon(`[keys."${KEY}"]\nmax_concurrency = 1\n`);
  const c = new Client({ socket: d.socket, failMode: "closed" });
  try {
    await withProvider([], async (provider) => {
      const held = await c.acquire(KEY);
      const b = aws.limit(bedrock(provider), { client: c, maxWait: 200 });
      const call = () => b.send(new ConverseCommand({ modelId: MODEL, messages: MESSAGES, inferenceConfig: { maxTokens: 16 } }));
      await assert.rejects(call(), (e) => e.name === "ThrottlingException" && e.$metadata.httpStatusCode === 429 && e.llmctl.reasonCode === "concurrency");
      assert.deepEqual((await provider.stats()).responses, {});
      await held.report({ status: 200 });
      // Once the slot is free the call goes.
      const r = await call();
      assert.equal(r.$metadata.httpStatusCode, 200);
    });
  } finally {
    c.close();
    await d.close();
  }
});

test("other clients are refused, other commands go untouched, bad settings fail at once", async () => {
  await withProvider([], async (provider) => {
    assert.throws(() => aws.limit({}, { client }), /AWS SDK for JavaScript v3/);
    assert.throws(() => aws.limit(bedrock(provider), {}), /llmctl Client/);
    assert.throws(() => aws.limit(bedrock(provider), { client, maxRetries: -1 }), /maxRetries/);
    assert.throws(() => aws.limit(bedrock(provider), { client, key: "bedrock/{modle}" }), /placeholder \{modle\}/);
    assert.ok(aws.LIMITED_COMMANDS.has("ConverseCommand"));
    const b = aws.limit(bedrock(provider, { maxAttempts: 1 }), { client });
    // Each attempt: inside the SDK's retries, before the request is signed.
    const stack = b.middlewareStack.identify().map((m) => m.split(" ")[0]);
    const at = (name) => stack.indexOf(name);
    assert.ok(at("retryMiddleware") >= 0 && at("retryMiddleware") < at("llmctlMiddleware"), stack.join(", "));
    assert.ok(at("llmctlMiddleware") < at("httpSigningMiddleware"), stack.join(", "));
    // A command nothing limits goes as the SDK sends it (the fake serves no such path).
    await assert.rejects(b.send(new ListAsyncInvokesCommand({})));
    assert.equal(daemon.key("bedrock/unknown"), undefined);
  });
});

test("the README's Bedrock recipe, run as written, is limited and settled", async () => {
  const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const m = readme.match(/<!-- recipe: node-bedrock -->\n```js\n([\s\S]*?)```/);
  assert.ok(m, "the README has the Bedrock recipe");
  await withProvider([], async (provider) => {
    // In the package, so "llmctl-client" and the AWS SDK resolve as in a project that has both.
    const file = path.join(path.dirname(fileURLToPath(import.meta.url)), `.bedrock-recipe-${process.pid}.mjs`);
    fs.writeFileSync(file, m[1]);
    try {
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(AWS|LLMCTL)_/.test(k)));
      Object.assign(env, {
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
        AWS_SECRET_ACCESS_KEY: "secret",
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: provider.url,
        LLMCTL_SOCKET: daemon.socket,
        LLMCTL_AUTOSTART: "0",
      });
      const run = spawnSync(process.execPath, [file], { env, encoding: "utf8", timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^tok/);
    } finally {
      fs.rmSync(file, { force: true });
    }
    await settledAt("bedrock/anthropic.claude-sonnet-4-5-v1:0", await providerTokens(provider));
  });
});
