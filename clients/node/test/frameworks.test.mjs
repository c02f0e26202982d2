// The README's Node recipe ("Frameworks": the Vercel AI SDK with @ai-sdk/openai, on Responses and
// chat completions, and @ai-sdk/anthropic, generateText and streamText; LangChain.js ChatOpenAI,
// invoke and stream), run as written against the real daemon and the fake provider: every
// request the provider saw was limited, the tokens settled are those it counted, streamed and not,
// and a 429 is retried once, by one layer.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, Provider, ROOT, startDaemon, waitUntil } from "./harness.mjs";

const KEYS = ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"];
const here = path.dirname(fileURLToPath(import.meta.url));

function recipe() {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const m = readme.match(/<!-- recipe: node-frameworks -->\n```js\n([\s\S]*?)```/);
  assert.ok(m, "the README has the Node recipe");
  return m[1];
}

/** Runs the recipe as a user's script; it sits in the package, so "llmctl-client" and the
 * frameworks resolve as they would in a project that installed them. */
function run(daemon, provider) {
  const file = path.join(here, `.recipe-${process.pid}.mjs`);
  fs.writeFileSync(file, recipe());
  try {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI|ANTHROPIC|LLMCTL)_/.test(k)));
    Object.assign(env, {
      OPENAI_BASE_URL: `${provider.url}/v1`,
      OPENAI_API_KEY: "test",
      // @ai-sdk/anthropic wants the base with its /v1.
      ANTHROPIC_BASE_URL: `${provider.url}/v1`,
      ANTHROPIC_API_KEY: "test",
      LLMCTL_SOCKET: daemon.socket,
      LLMCTL_AUTOSTART: "0",
    });
    return spawnSync(process.execPath, [file], { env, encoding: "utf8", timeout: 120_000 });
  } finally {
    fs.rmSync(file, { force: true });
  }
}

async function settled(daemon, provider) {
  let last;
  await waitUntil(async () => {
    const keys = KEYS.map((k) => daemon.key(k));
    const s = await provider.stats();
    last = {
      missing: KEYS.filter((k, i) => !keys[i]),
      outstanding: keys.reduce((n, k) => n + (k ? k.tokens_outstanding + k.in_flight : 0), 0),
      granted: keys.reduce((n, k) => n + (k?.granted_total ?? 0), 0),
      used: keys.reduce((n, k) => n + (k?.tokens_used ?? 0), 0),
      atEstimate: keys.reduce((n, k) => n + (k?.settled_at_estimate_total ?? 0), 0),
      rateLimited: keys.reduce((n, k) => n + (k?.rate_limited_total ?? 0), 0),
      providerRequests: s.requests,
      providerTokens: s.input_tokens + s.output_tokens,
      provider429s: s.responses["429"] ?? 0,
    };
    return last.missing.length === 0 && last.outstanding === 0 && last.used === last.providerTokens;
  }, 15_000, "the recipe's leases settled at the provider's usage").catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify(last)}`);
  });
  return last;
}

async function withPair(providerArgs, body) {
  const daemon = await startDaemon();
  const provider = await Provider.start(...providerArgs);
  try {
    return await body(daemon, provider);
  } finally {
    provider.close();
    await daemon.close();
  }
}

let calls;

test("the Node recipe is limited and settled at the provider's usage", async () => {
  await withPair([], async (daemon, provider) => {
    const r = run(daemon, provider);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.ok(r.stdout.includes("tok"), r.stdout);
    const got = await settled(daemon, provider);
    console.log(`node recipe: ${JSON.stringify(got)}`);
    assert.ok(got.granted > 0 && got.granted === got.providerRequests, `a request went around the limiter: ${JSON.stringify(got)}`);
    assert.equal(got.atEstimate, 0, JSON.stringify(got));
    assert.equal(got.provider429s, 0);
    calls = got.providerRequests;
  });
});

test("a 429 in the Node recipe is retried once, by one layer", async () => {
  assert.ok(calls > 0, "the clean run came first");
  await withPair(["--fault", "rate_limit,retry_after=1,count=1"], async (daemon, provider) => {
    const r = run(daemon, provider);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const got = await settled(daemon, provider);
    assert.equal(got.provider429s, 1, JSON.stringify(got));
    assert.equal(got.providerRequests, calls + 1, `retried once, by one layer: ${JSON.stringify(got)}`);
    assert.equal(got.granted, got.providerRequests, JSON.stringify(got));
    assert.equal(got.rateLimited, 1);
  });
});

const UNDER_EXEC = `
import { generateText, streamText } from "ai";
import { anthropic } from "@ai-sdk/anthropic";
import { openai } from "@ai-sdk/openai";
for (const model of [anthropic("claude-sonnet-4-5"), openai.chat("gpt-4o-mini")]) {
  console.log((await generateText({ model, prompt: "Say hi.", maxOutputTokens: 256, maxRetries: 0 })).text);
  for await (const t of streamText({ model, prompt: "Say hi.", maxOutputTokens: 256, maxRetries: 0 }).textStream) process.stdout.write(t);
}
`;

test("the Vercel AI SDK under llmctl exec, nothing of llmctl in it: limited, its Anthropic base without /v1 served", async () => {
  await withPair([], async (daemon, provider) => {
    const dir = fs.mkdtempSync(path.join(here, ".exec-"));
    try {
      const file = path.join(dir, "app.mjs");
      fs.writeFileSync(file, UNDER_EXEC);
      const config = path.join(dir, "proxy.toml");
      fs.writeFileSync(config, `[proxy]\nlisten = "127.0.0.1:1"\n[proxy.upstreams.openai]\nurl = "${provider.url}"\n[proxy.upstreams.anthropic]\nurl = "${provider.url}"\n`);
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI|ANTHROPIC|LLMCTL)_/.test(k)));
      Object.assign(env, { OPENAI_API_KEY: "test", ANTHROPIC_API_KEY: "test" });
      const r = spawnSync(BIN, ["exec", "--config", config, "--socket", daemon.socket, "--", process.execPath, file], { env, encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      const got = await settled(daemon, provider);
      assert.equal(got.providerRequests, 4, JSON.stringify(got));
      assert.equal(got.granted, 4, JSON.stringify(got));
      assert.equal(got.atEstimate, 0, JSON.stringify(got));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
