/**
 * `limitedFetch`: a drop-in `fetch` that asks the daemon before each try, reports each try with
 * the provider's usage, and follows the daemon's advice (wait and retry, fall back, or hand the
 * answer to the caller). For the SDKs:
 *
 *     new OpenAI({ fetch: limitedFetch({ client, key: "openai/gpt-5.5" }), maxRetries: 0 })
 *     new Anthropic({ fetch: limitedFetch({ client, key: "anthropic/opus" }), maxRetries: 0 })
 *
 * Usage is read from JSON bodies and from server-sent events as they go by, without consuming
 * anything the caller reads.
 */

import type { Advice, Client, Lease } from "./client.js";
import { parseUsage } from "./client.js";
import { errorInfo, EventWatcher } from "./answer.js";
import { DEFAULT_OUTPUT_TOKENS, estimateBody } from "./estimate.js";

export interface LimitedFetchOptions {
  client: Client;
  /** The key each call acquires on (or give `routeGroup`). */
  key?: string;
  routeGroup?: string;
  /** The fetch to call (default: the global one). */
  fetch?: typeof fetch;
  priority?: number;
  /** How long each acquire may wait in the daemon, in ms (default an hour). */
  maxWait?: number;
  runId?: string;
  profile?: string;
  /** A bound on tries whatever the advice (default 20). */
  maxAttempts?: number;
}

/** The longest error message sent with a report. */
const MAX_ERROR_MESSAGE = 4096;

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function isEventStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").includes("text/event-stream");
}

function isJson(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").includes("json");
}

/** Reads the watcher's copy of a stream to its end, then reports the try. */
async function reportStream(lease: Lease, res: Response, body: ReadableStream<Uint8Array>): Promise<void> {
  const w = new EventWatcher();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      w.feed(value);
    }
  } catch (e) {
    const o = w.finish();
    await lease
      .report({ status: 0, errorType: "connection", errorMessage: String(e).slice(0, MAX_ERROR_MESSAGE), streamStarted: o.output })
      .catch(() => undefined);
    return;
  }
  const o = w.finish();
  const usage = o.usage;
  await lease
    .report({
      status: o.errorType ? 500 : res.status,
      headers: res.headers,
      inputTokens: usage?.[0],
      cachedInputTokens: usage?.[1],
      outputTokens: usage?.[2],
      usageKnown: usage !== null,
      errorType: o.errorType,
      errorMessage: o.errorMessage.slice(0, MAX_ERROR_MESSAGE),
      streamStarted: o.output,
    })
    .catch(() => undefined);
}

/** A `fetch` that goes through the daemon. */
export function limitedFetch(options: LimitedFetchOptions): typeof fetch {
  const { client } = options;
  const inner = options.fetch ?? globalThis.fetch;
  const maxAttempts = options.maxAttempts ?? 20;
  if (!options.key && !options.routeGroup) {
    throw new TypeError("limitedFetch needs a key (or a routeGroup) to acquire on");
  }
  const limited = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const raw = typeof init?.body === "string" ? init.body : input instanceof Request ? await input.clone().text() : "";
    const est = raw ? estimateBody(raw) : { inputTokens: 1, outputTokens: DEFAULT_OUTPUT_TOKENS };
    const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
    const firstAttempt = Date.now();
    let key = options.key ?? null;
    for (let attempt = 1; ; attempt++) {
      const lease = await client.acquire(key, {
        inputTokens: est.inputTokens,
        outputTokens: est.outputTokens,
        priority: options.priority,
        maxWait: options.maxWait,
        runId: options.runId,
        routeGroup: key ? undefined : options.routeGroup,
        profile: options.profile,
        attempt,
        firstAttempt,
      });
      let res: Response;
      let advice: Advice;
      try {
        res = await inner(input instanceof Request ? input.clone() : input, init);
      } catch (e) {
        const cancelled = signal?.aborted === true;
        advice = await lease.report({
          status: 0,
          errorType: cancelled ? "cancelled" : "connection",
          errorMessage: String(e).slice(0, MAX_ERROR_MESSAGE),
        });
        if (cancelled || attempt >= maxAttempts || (advice.action !== "retry" && advice.action !== "fallback")) {
          throw e;
        }
        await sleep(advice.retryAfterMs, signal);
        key = advice.fallbackKey || key;
        continue;
      }
      if (res.ok) {
        if (isEventStream(res) && res.body) {
          const [mine, theirs] = res.body.tee();
          void reportStream(lease, res, theirs);
          return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers });
        }
        const data: unknown = isJson(res) ? await res.clone().json().catch(() => null) : null;
        const holder = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
        const usage = parseUsage(holder.usage ?? holder.usageMetadata);
        await lease.report({
          status: res.status,
          headers: res.headers,
          inputTokens: usage?.[0],
          cachedInputTokens: usage?.[1],
          outputTokens: usage?.[2],
          usageKnown: usage !== null,
        });
        return res;
      }
      const text = await res.clone().text().catch(() => "");
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      const [errorType, errorMessage] = errorInfo(parsed);
      advice = await lease.report({
        status: res.status,
        headers: res.headers,
        errorType,
        errorMessage: (errorMessage || text).slice(0, MAX_ERROR_MESSAGE),
      });
      if (attempt >= maxAttempts || (advice.action !== "retry" && advice.action !== "fallback")) {
        return res;
      }
      await res.body?.cancel().catch(() => undefined);
      await sleep(advice.retryAfterMs, signal);
      key = advice.fallbackKey || key;
    }
  };
  return limited as typeof fetch;
}
