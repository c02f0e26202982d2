// The rules stated once in conformance/*.json, run against the Node client: fail-open advice,
// the headers a report carries, request estimates and error bodies.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  DEFAULT_OUTPUT_TOKENS,
  EventWatcher,
  aws,
  FAIL_OPEN_ATTEMPTS,
  Unasked,
  askUsage,
  errorInfo,
  estimateBody,
  limitHeaders,
  localAdvice,
  pathCall,
  refusesUsage,
  usageOf,
} from "../dist/index.js";

const table = (name) => JSON.parse(readFileSync(new URL(`../../../conformance/${name}`, import.meta.url), "utf8"));

test("the tables' constants are the client's", () => {
  assert.equal(table("advice.json").max_attempts, FAIL_OPEN_ATTEMPTS);
  assert.equal(table("estimates.json").default_output_tokens, DEFAULT_OUTPUT_TOKENS);
});

for (const c of table("advice.json").cases) {
  test(`fail-open advice: ${c.name}`, () => {
    const a = localAdvice(
      { status: c.status, errorType: c.error_type, streamStarted: c.stream_started ?? false, headers: c.headers ?? {} },
      c.attempt ?? 1,
    );
    assert.equal(a.action, c.fail_open, JSON.stringify(a));
    if (c.min_delay_ms !== undefined) {
      assert.ok(a.retryAfterMs >= c.min_delay_ms, JSON.stringify(a));
    }
    if (c.max_delay_ms !== undefined) {
      assert.ok(a.retryAfterMs <= c.max_delay_ms, JSON.stringify(a));
    }
  });
}

for (const c of table("daemon_advice.json").cases) {
  test(`the daemon's advice: ${c.name}`, async () => {
    const { adviceOf } = await import("../dist/index.js");
    const advice = adviceOf({ advice: c.advice, retryAfterMs: 0n, fallbackKey: "", reason: "" });
    assert.equal(advice.action, c.action);
    assert.equal(advice.action === "retry", c.retries);
  });
}

for (const c of table("headers.json").cases) {
  test(`headers a report carries: ${c.name}`, () => {
    assert.equal(Object.keys(limitHeaders({ [c.name]: "1" })).length > 0, c.kept);
  });
}

for (const c of table("estimates.json").cases) {
  test(`estimates: ${c.name}`, () => {
    const e = estimateBody(c.body);
    assert.deepEqual(
      [e.inputTokens, e.outputTokens, e.outputDeclared, e.stream],
      [c.input_tokens, c.output_tokens, c.output_declared, c.stream],
    );
  });
}

for (const c of table("paths.json").cases) {
  test(`paths: ${c.name}`, () => {
    const p = pathCall(c.path);
    assert.deepEqual([p.limited, p.model, p.stream], [c.limited, c.model, c.stream]);
  });
}

for (const c of table("error_bodies.json").cases) {
  test(`error bodies: ${c.name}`, () => {
    assert.deepEqual(errorInfo(c.body), [c.type, c.message]);
  });
}

const sse = (events) => events.map(([e, d]) => (e ? `event: ${e}\r\n` : "") + `data: ${JSON.stringify(d)}\r\n\r\n`).join("");

for (const c of table("usage.json").cases) {
  test(`usage and outcome: ${c.name}`, () => {
    if (c.body !== undefined) {
      assert.deepEqual(usageOf(c.body), c.usage);
      return;
    }
    const bytes = new TextEncoder().encode(sse(c.events));
    for (const chunk of [1, 7, bytes.length]) {
      const w = new EventWatcher();
      for (let i = 0; i < bytes.length; i += chunk) {
        w.feed(bytes.slice(i, i + chunk));
      }
      assert.deepEqual(
        w.finish(),
        { usage: c.usage, errorType: c.error_type, errorMessage: c.error_message, output: c.output },
        `chunks of ${chunk}`,
      );
    }
  });
}

test("fail-static: the table's constants and phases are the client's", async () => {
  const { FAIL_STATIC_FOR_MS, RESTART_WAIT_MS, WINDOW_MS, outagePhase } = await import("../dist/index.js");
  const t = table("fail_static.json");
  assert.deepEqual([t.restart_wait_ms, t.fail_static_for_ms, t.window_ms], [RESTART_WAIT_MS, FAIL_STATIC_FOR_MS, WINDOW_MS]);
  for (const c of t.phases) {
    assert.equal(outagePhase(c.outage_ms, c.answered), c.phase, c.name);
  }
});

for (const c of table("fail_static.json").cases) {
  test(`fail-static limits: ${c.name}`, async () => {
    const { staticLimits } = await import("../dist/index.js");
    const got = staticLimits(c.grants_ms, c.in_flight_max);
    if (c.rate_per_s === null) {
      assert.equal(got, null);
      return;
    }
    assert.ok(Math.abs(got.ratePerS - c.rate_per_s) < 1e-9, JSON.stringify(got));
    assert.deepEqual([got.burst, got.concurrency], [c.burst, c.concurrency]);
  });
}

const usageTable = table("stream_usage.json");
for (const c of usageTable.requests) {
  test(`stream usage asked for: ${c.name}`, () => {
    assert.deepEqual(askUsage(c.path, c.body), c.body_sent);
  });
}
for (const c of usageTable.refusals) {
  test(`stream_options refused: ${c.name}`, () => {
    assert.equal(refusesUsage(c.status, c.body), c.refuses);
  });
}
for (const c of usageTable.streams) {
  test(`the stream the caller would have had: ${c.name}`, () => {
    const input = new TextEncoder().encode(c.in);
    for (const size of [Math.max(input.length, 1), 1, 3, 17]) {
      const f = new Unasked();
      const parts = [];
      for (let i = 0; i < input.length; i += size) {
        parts.push(f.feed(input.subarray(i, i + size)));
      }
      parts.push(f.finish());
      const out = Buffer.concat(parts.map((p) => Buffer.from(p))).toString("utf8");
      assert.equal(out, c.out, `chunks of ${size}`);
    }
  });
}

const bedrockUsage = { converse: aws.converseUsage, metrics: aws.metricsUsage, headers: aws.headersUsage };

for (const c of table("bedrock_stream_errors.json").cases) {
  test(`an exception inside a Bedrock stream: ${c.exception} -> ${c.status}`, () => {
    assert.equal(aws.streamErrorStatus(c.exception), c.status);
  });
}

for (const c of table("bedrock_usage.json").cases) {
  test(`Bedrock's counts: ${c.name}`, () => {
    assert.deepEqual(bedrockUsage[c.from](c.fields), c.usage);
  });
}
