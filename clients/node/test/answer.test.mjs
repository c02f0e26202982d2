// Reading usage, errors and output from server-sent events, fed in chunks of any size.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { EventWatcher, errorInfo, estimateBody, reasonCode, pb } from "../dist/index.js";

function watch(text, chunk) {
  const w = new EventWatcher();
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += chunk) {
    w.feed(bytes.slice(i, i + chunk));
  }
  return w.finish();
}

const sse = (events) => events.map(([e, d]) => (e ? `event: ${e}\r\n` : "") + `data: ${JSON.stringify(d)}\r\n\r\n`).join("");

test("OpenAI chat: the usage of the last chunk, output seen", () => {
  const text =
    sse([
      [null, { choices: [{ delta: { role: "assistant" } }] }],
      [null, { choices: [{ delta: { content: "Hi" } }] }],
      [null, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } }],
    ]) + "data: [DONE]\r\n\r\n";
  for (const chunk of [1, 2, 7, text.length]) {
    assert.deepEqual(watch(text, chunk), { usage: [12, 4, 3], errorType: "", errorMessage: "", output: true }, `chunks of ${chunk}`);
  }
});

test("OpenAI chat: a tool call is output too", () => {
  const text = sse([[null, { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "f" } }] } }] }]]);
  assert.equal(watch(text, 5).output, true);
});

test("Anthropic: input from message_start, output from message_delta", () => {
  const text = sse([
    ["message_start", { type: "message_start", message: { usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 1 } } }],
    ["content_block_delta", { type: "content_block_delta", delta: { type: "text_delta", text: "Hi" } }],
    ["message_delta", { type: "message_delta", usage: { output_tokens: 9 } }],
  ]);
  assert.deepEqual(watch(text, 3), { usage: [25, 5, 9], errorType: "", errorMessage: "", output: true });
});

test("Responses API: usage of response.completed; response.failed is an error", () => {
  const ok = sse([
    [null, { type: "response.output_text.delta", delta: "Hi" }],
    [null, { type: "response.completed", response: { usage: { input_tokens: 7, output_tokens: 2, input_tokens_details: { cached_tokens: 1 } } } }],
  ]);
  assert.deepEqual(watch(ok, 4), { usage: [7, 1, 2], errorType: "", errorMessage: "", output: true });
  const failed = sse([[null, { type: "response.failed", response: { error: { code: "server_error", message: "boom" } } }]]);
  const o = watch(failed, 4);
  assert.equal(o.errorType, "server_error");
  assert.equal(o.errorMessage, "boom");
});

test("an error event inside the stream: the first one is kept", () => {
  const text = sse([
    ["error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
    ["error", { type: "error", error: { type: "api_error", message: "later" } }],
  ]);
  const o = watch(text, 6);
  assert.equal(o.errorType, "overloaded_error");
  assert.equal(o.errorMessage, "Overloaded");
});

test("a CRLF split across chunks does not end an event early", () => {
  // The event's name is on its own line: losing it would lose the error.
  const text = 'event: error\r\ndata: {"error": {"code": "rate_limit_exceeded",\r\ndata: "message": "slow down"}}\r\n\r\n';
  for (const chunk of [1, 13, text.length]) {
    const o = watch(text, chunk);
    assert.equal(o.errorType, "rate_limit_exceeded", `chunks of ${chunk}`);
  }
});

test("Gemini's quota id and retry delay beside its message are kept, so a daily quota is told from a minute's", () => {
  const body = {
    error: {
      code: 429,
      status: "RESOURCE_EXHAUSTED",
      message: "You exceeded your current quota.",
      details: [
        { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }] },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "20s" },
      ],
    },
  };
  assert.deepEqual(errorInfo(body), [
    "RESOURCE_EXHAUSTED",
    "You exceeded your current quota. [quotaId=GenerateRequestsPerDayPerProjectPerModel-FreeTier; retryDelay=20s]",
  ]);
  assert.deepEqual(errorInfo({ error: { message: "m", code: "rate_limit_exceeded" } }), ["rate_limit_exceeded", "m"]);
});

test("a body without max_tokens is marked undeclared; one with it declared", () => {
  const undeclared = estimateBody({ model: "m", messages: [{ role: "user", content: "hi" }] });
  assert.equal(undeclared.outputDeclared, false);
  assert.equal(undeclared.outputTokens, 4096);
  const declared = estimateBody({ model: "m", messages: [], max_completion_tokens: 300 });
  assert.deepEqual([declared.outputDeclared, declared.outputTokens], [true, 300]);
});

test("a refusal reason this client does not know is its number, never a guess", () => {
  assert.equal(reasonCode(pb.RefusalReason.DAILY_QUOTA), "daily_quota");
  assert.equal(reasonCode(pb.RefusalReason.UNSPECIFIED), "");
  assert.equal(reasonCode(99), "99");
});
