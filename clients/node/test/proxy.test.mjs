// The real openai and @anthropic-ai/sdk packages pointed at `llmctl proxy` by base URL alone (no
// llmctl import in the call): plain and streamed calls settle at their usage, and a refusal is
// the SDK's RateLimitError, which it does not retry (x-should-retry: false).

import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { BIN, Provider, startDaemon, waitUntil } from "./harness.mjs";

const MESSAGES = [{ role: "user", content: "Say hello to the people who keep the quota." }];
let daemon;
let provider;
let proxy;

/** A real `llmctl proxy` on a free port, openai and anthropic at the fake provider. */
async function startProxy(socket, upstream, extra = "") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-px-"));
  const config = path.join(dir, "config.toml");
  fs.writeFileSync(
    config,
    `[proxy]\n${extra}\n[proxy.upstreams.openai]\nurl = "${upstream}"\n[proxy.upstreams.anthropic]\nurl = "${upstream}"\n`,
  );
  const proc = spawn(BIN, ["proxy", "--listen", "127.0.0.1:0", "--config", config, "--socket", socket], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = readline.createInterface({ input: proc.stderr });
  const url = await new Promise((resolve, reject) => {
    lines.on("line", (l) => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(l);
      if (m) resolve(m[1]);
    });
    proc.once("exit", (c) => reject(new Error(`the proxy exited with ${c}`)));
  });
  return {
    url,
    async close() {
      if (proc.exitCode === null) {
        const done = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await done;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

before(async () => {
  daemon = await startDaemon('[keys."anthropic/slow"]\nrequests_per_minute = 2\n');
  provider = await Provider.start("--cache-share", "0.5", "--completion-tokens", "12", "--rpm", "100000");
  proxy = await startProxy(daemon.socket, provider.url);
});

after(async () => {
  await proxy.close();
  provider.close();
  await daemon.close();
});

async function settled(key, tokens) {
  await waitUntil(() => {
    const k = daemon.key(key);
    return k && k.tokens_used === tokens && k.tokens_outstanding === 0 && k.in_flight === 0;
  }, 10_000, `${key} settled at ${tokens} tokens`);
}

test("openai through the proxy: plain and streamed calls settle at their usage", async () => {
  const oa = new OpenAI({ baseURL: `${proxy.url}/openai/v1`, apiKey: "test" });
  const r = await oa.chat.completions.create({ model: "gpt-test", messages: MESSAGES, max_tokens: 64 });
  await settled("openai/gpt-test", r.usage.prompt_tokens + r.usage.completion_tokens);
  const stream = await oa.chat.completions.create({
    model: "gpt-stream",
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
  await settled("openai/gpt-stream", usage.prompt_tokens + usage.completion_tokens);
});

test("anthropic through the proxy: plain and streamed calls settle at their usage", async () => {
  const an = new Anthropic({ baseURL: `${proxy.url}/anthropic`, apiKey: "test" });
  const all = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + u.output_tokens;
  const m = await an.messages.create({ model: "claude-test", max_tokens: 64, messages: MESSAGES });
  await settled("anthropic/claude-test", all(m.usage));
  const stream = an.messages.stream({ model: "claude-stream", max_tokens: 64, messages: MESSAGES });
  let text = "";
  stream.on("text", (t) => {
    text += t;
  });
  const final = await stream.finalMessage();
  assert.ok(text);
  await settled("anthropic/claude-stream", all(final.usage));
});

test("not granted in time is the SDK's RateLimitError, and the SDK does not retry it", async () => {
  const slow = await startProxy(daemon.socket, provider.url, 'max_wait = "300ms"');
  try {
    const an = new Anthropic({ baseURL: `${slow.url}/anthropic`, apiKey: "test" }); // maxRetries 2
    const before = (await provider.stats()).requests;
    await assert.rejects(an.messages.create({ model: "slow", max_tokens: 16, messages: MESSAGES }), (e) => {
      assert.ok(e instanceof Anthropic.RateLimitError, `${e}`);
      assert.match(String(e.message), /not granted/);
      return true;
    });
    const k = daemon.key("anthropic/slow");
    assert.deepEqual([k.requests_total, k.rejected_total], [1, 1], "the SDK asked once");
    assert.equal((await provider.stats()).requests, before);
  } finally {
    await slow.close();
  }
});
