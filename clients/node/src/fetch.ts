/**
 * `limitedFetch`: a drop-in `fetch` that asks the daemon before each try, reports each try with
 * the provider's usage, and follows the daemon's advice: wait and retry, or hand the answer to
 * the caller (also for a fallback, which would need the request rewritten for another
 * provider). For the SDKs:
 *
 *     new OpenAI({ fetch: limitedFetch({ client, key: "openai/gpt-5.5" }), maxRetries: 0 })
 *     new Anthropic({ fetch: limitedFetch({ client, key: "anthropic/opus" }), maxRetries: 0 })
 *
 * Usage is read from JSON bodies and from server-sent events as they go by, without consuming
 * anything the caller reads.
 */

import type { Client, Lease, ReportOptions } from "./client.js";
import type { Advice } from "./client.js";
import { parseUsage } from "./client.js";
import { LlmctlError } from "./errors.js";
import { errorInfo, EventWatcher } from "./answer.js";
import { estimateRequest } from "./estimate.js";
import { pathCall } from "./paths.js";
import { askUsage, refusedBy, refusesUsage, rememberRefusal, Unasked } from "./streamusage.js";
import { CONTENT_TYPE as AWS_EVENT_STREAM } from "./eventstream.js";

export interface LimitedFetchOptions {
  client: Client;
  /** The key each call acquires on (or give `routeGroup`). */
  /** The quota to acquire on; `{model}` in it is replaced by the request's model. */
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

/** Server-sent events, or AWS's event stream (Bedrock's streamed answers). */
function isEventStream(res: Response): boolean {
  const type = (res.headers.get("content-type") ?? "").toLowerCase();
  return type.includes("text/event-stream") || type.includes(AWS_EVENT_STREAM);
}

/** `application/json` or a `+json` type; not line-delimited JSON, which streams. */
function isJson(res: Response): boolean {
  return /^application\/(json|[\w.+-]+\+json)\s*(;|$)/i.test(res.headers.get("content-type") ?? "");
}

/** A report of an answer: its status and headers, and its usage when it was read. */
function answered(res: Response, usage: [number, number, number] | null): ReportOptions {
  return {
    status: res.status,
    headers: res.headers,
    inputTokens: usage?.[0],
    cachedInputTokens: usage?.[1],
    outputTokens: usage?.[2],
    usageKnown: usage !== null,
  };
}

let warned = false;

/** Reports a try; a daemon that cannot take the report does not cost the caller the answer the
 * provider gave (a warning says so, once). `onAdvice` is given the advice the report got. */
export async function reportSafely(lease: Lease, o: ReportOptions, onAdvice?: (advice: Advice) => void): Promise<Advice | null> {
  try {
    const advice = await lease.report(o);
    onAdvice?.(advice);
    return advice;
  } catch (e) {
    if (!(e instanceof LlmctlError)) {
      throw e;
    }
    if (!warned) {
      warned = true;
      process.emitWarning(`llmctl: a report was not taken (${e.message}); the answer goes to the caller as it came`);
    }
    return null;
  }
}

/** The body of a streamed answer, passed through as the caller reads it: events are watched on
 * the way, and the try is reported once, when the stream ends, breaks or is cancelled (then the
 * provider's stream is cancelled too). */
function reportingStream(
  lease: Lease,
  res: Response,
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | null,
  unasked: Unasked | null,
  answeredUnixMs: number,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const w = new EventWatcher(res.headers.get("content-type") ?? "");
  let reported = false;
  const finish = async (how: "end" | "error" | "cancel", err?: unknown): Promise<void> => {
    if (reported) {
      return;
    }
    reported = true;
    const o = w.finish();
    const usage = o.usage;
    let errorType = o.errorType;
    let errorMessage = o.errorMessage;
    if (!errorType && how === "error") {
      errorType = signal?.aborted ? "cancelled" : "connection";
      errorMessage = String(err);
    } else if (!errorType && how === "cancel" && signal?.aborted) {
      errorType = "cancelled";
    }
    await reportSafely(lease, {
      ...answered(res, usage),
      errorType,
      errorMessage: errorMessage.slice(0, MAX_ERROR_MESSAGE),
      streamStarted: o.output,
      answeredUnixMs,
    });
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Until something goes to the caller: a stream whose usage was asked for on its behalf
        // holds back what it would not have had.
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (e) {
            controller.error(e);
            await finish("error", e);
            return;
          }
          if (chunk.done) {
            const rest = unasked?.finish();
            if (rest && rest.length > 0) {
              controller.enqueue(rest);
            }
            controller.close();
            await finish("end");
            return;
          }
          w.feed(chunk.value);
          const out = unasked ? unasked.feed(chunk.value) : chunk.value;
          if (out.length > 0) {
            controller.enqueue(out);
            return;
          }
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => undefined);
        await finish("cancel");
      },
    },
    { highWaterMark: 0 },
  );
}

/** A `fetch` that goes through the daemon. */
export function limitedFetch(options: LimitedFetchOptions): typeof fetch {
  const { client } = options;
  const inner = options.fetch ?? globalThis.fetch;
  const maxAttempts = options.maxAttempts ?? 20;
  if (!options.key && !options.routeGroup) {
    throw new TypeError("limitedFetch needs a key (or a routeGroup) to acquire on");
  }
  if (options.key) {
    checkKeyTemplate(options.key);
  }
  const limited = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    // The path may name the model (clouds put it there) or say the call generates nothing.
    const call = pathCall(url.pathname);
    if (!call.limited) {
      return inner(input, init);
    }
    const raw = typeof init?.body === "string" ? init.body : input instanceof Request ? await input.clone().text() : "";
    const est = estimateRequest(raw);
    // `{model}` in the key is the request's model, as in the Python transport.
    const model = call.model ?? est.model;
    const key = options.key ? options.key.replaceAll("{model}", model || "unknown") : null;
    const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
    // A stream that omits its usage unless asked is asked for it (conformance/stream_usage.json).
    let asked = usageAsked(url, raw, input, init);
    // The profile's deadline counts from the first grant, not from the wait before it.
    let firstAttempt: number | undefined;
    for (let attempt = 1; ; attempt++) {
      const lease = await client.acquire(key, {
        inputTokens: est.inputTokens,
        outputTokens: est.outputTokens,
        outputTokensDeclared: est.outputDeclared,
        priority: options.priority,
        maxWait: options.maxWait,
        runId: options.runId,
        routeGroup: options.key ? undefined : options.routeGroup,
        profile: options.profile,
        attempt,
        firstAttempt,
        signal: signal ?? undefined,
      });
      firstAttempt ??= Date.now();
      if (signal?.aborted) {
        await reportSafely(lease, { status: 0, errorType: "cancelled" });
        throw signal.reason;
      }
      let res: Response;
      try {
        // A Request's body is read once: each try sends a copy.
        const [sendInput, sendInit] = asked ? [asked.input, asked.init] : [input, init];
        res = await inner(sendInput instanceof Request ? sendInput.clone() : sendInput, sendInit);
      } catch (e) {
        const cancelled = signal?.aborted === true;
        const advice = await reportSafely(lease, {
          status: 0,
          errorType: cancelled ? "cancelled" : "connection",
          errorMessage: String(e).slice(0, MAX_ERROR_MESSAGE),
        });
        if (cancelled || !advice || attempt >= maxAttempts || advice.action !== "retry") {
          throw e;
        }
        await sleep(advice.retryAfterMs, signal);
        continue;
      }
      // The provider had taken the request by the time its status and headers came.
      const answeredUnixMs = Date.now();
      if (res.ok) {
        if (isEventStream(res) && res.body) {
          const body = reportingStream(lease, res, res.body, signal, asked ? new Unasked() : null, answeredUnixMs);
          return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
        }
        const data: unknown = isJson(res) ? await res.clone().json().catch(() => null) : null;
        const holder = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
        const usage = parseUsage(holder.usage ?? holder.usageMetadata);
        await reportSafely(lease, { ...answered(res, usage), answeredUnixMs });
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
      const advice = await reportSafely(lease, {
        status: res.status,
        headers: res.headers,
        errorType,
        errorMessage: (errorMessage || text).slice(0, MAX_ERROR_MESSAGE),
      });
      if (asked && refusesUsage(res.status, parsed)) {
        // The upstream refuses to be asked for the stream's usage: the caller's own request
        // goes, once, and that upstream is not asked again (unless the caller's body had a
        // stream_options of its own, which may be what was refused).
        if (!asked.callerOptions && rememberRefusal(url.origin)) {
          process.emitWarning(
            `llmctl: ${url.origin} refuses stream_options.include_usage; its streams go as the caller wrote them and are settled at the estimate`,
          );
        }
        asked = null;
        await res.body?.cancel().catch(() => undefined);
        continue;
      }
      // A fallback would need the request rewritten for another provider: the answer goes
      // back, and the caller (or its route group) decides.
      if (!advice || attempt >= maxAttempts || advice.action !== "retry") {
        return res;
      }
      await res.body?.cancel().catch(() => undefined);
      await sleep(advice.retryAfterMs, signal);
    }
  };
  return limited as typeof fetch;
}

/** The request to send asking for its stream's usage, when the caller did not and the upstream
 * has not refused it; null to send the caller's as it is. */
function usageAsked(
  url: URL,
  raw: string,
  input: RequestInfo | URL,
  init: RequestInit | undefined,
): { input: RequestInfo | URL; init: RequestInit; callerOptions: boolean } | null {
  if (!raw || refusedBy(url.origin)) {
    return null;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return null;
  }
  const sent = askUsage(url.pathname, body);
  if (!sent) {
    return null;
  }
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.delete("content-length");
  const bodyText = JSON.stringify(sent);
  // A refusal naming the option may be of the caller's own stream_options.
  const own = (body as Record<string, unknown>).stream_options;
  const callerOptions = !!own && typeof own === "object" && !Array.isArray(own);
  if (input instanceof Request) {
    return { input: new Request(input.clone(), { ...init, headers, body: bodyText }), init: {}, callerOptions };
  }
  return { input, init: { ...init, headers, body: bodyText }, callerOptions };
}

/** A key template's typos fail when `limitedFetch` is built, not at the first request: only
 * `{model}` is replaced (by the request's model), and what is left must be a key the daemon
 * takes (segments of visible characters between single slashes, at most 256 bytes). */
export function checkKeyTemplate(key: string): void {
  for (const found of key.match(/\{[^{}]*\}/g) ?? []) {
    if (found !== "{model}") {
      throw new TypeError(`key ${JSON.stringify(key)} has the placeholder ${found}; only {model} is replaced (by the model)`);
    }
  }
  const k = key.replaceAll("{model}", "m");
  if (k.includes("{") || k.includes("}")) {
    throw new TypeError(`key ${JSON.stringify(key)} has a lone brace; the one placeholder is {model}`);
  }
  if (new TextEncoder().encode(k).length > 256) {
    throw new TypeError(`key ${JSON.stringify(key.slice(0, 40))}... is longer than 256 bytes`);
  }
  // The characters the daemon refuses in a name: control characters and the invisible ones.
  if (/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/.test(k)) {
    throw new TypeError(`key ${JSON.stringify(key)} has control or invisible characters; use a path like "openai/gpt-5.5"`);
  }
  if (k.split("/").some((part) => part === "")) {
    throw new TypeError(`key ${JSON.stringify(key)} has an empty segment; write it as a path like "anthropic/org-a/opus"`);
  }
}
