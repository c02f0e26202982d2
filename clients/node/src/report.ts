/** What a report carries, and the advice without the daemon (the rules: conformance/headers.json,
 * conformance/usage.json, conformance/advice.json). */

import type { Advice, HeadersLike, ReportOptions } from "./types.js";

const LIMIT_HEADER_PREFIXES = ["x-ratelimit-", "anthropic-ratelimit-", "ratelimit", "x-codex-"];
const RETRY_HEADERS = new Set(["retry-after", "retry-after-ms", "x-ms-retry-after-ms", "x-should-retry"]);
/** The daemon takes at most this many headers. */
const MAX_HEADERS = 64;

/** The rate-limit and retry headers of `h`, as the daemon reads them. */
export function limitHeaders(h: HeadersLike | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) {
    return out;
  }
  let entries: Iterable<[string, unknown]>;
  if (h instanceof Headers) {
    const pairs: Array<[string, string]> = [];
    h.forEach((value, name) => pairs.push([name, value]));
    entries = pairs;
  } else if (Symbol.iterator in (h as object)) {
    entries = h as Iterable<[string, string]>;
  } else {
    entries = Object.entries(h as Record<string, unknown>);
  }
  for (const [name, value] of entries) {
    const n = name.toLowerCase();
    if (!(RETRY_HEADERS.has(n) || LIMIT_HEADER_PREFIXES.some((p) => n.startsWith(p)))) {
      continue;
    }
    const v = Array.isArray(value) ? value.join(", ") : value;
    if (typeof v === "string" && Object.keys(out).length < MAX_HEADERS) {
      out[n] = v;
    }
  }
  return out;
}

/** Advice computed without the daemon (fail-open): retry what a retry may fix, a few times. */
/** The error type of a request its caller gave up on after sending it (conformance/advice.json). */
export const CANCELLED = "cancelled";
/** Attempts a call makes while the daemon cannot be asked (conformance/advice.json). */
export const FAIL_OPEN_ATTEMPTS = 4;
const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
const QUOTA_WORDS = ["insufficient_quota", "billing", "spend", "credit", "quota_exhausted"];

/** Advice when the daemon cannot be asked (fail open): the same classes, no shared state, at most
 * `FAIL_OPEN_ATTEMPTS` attempts (the rules: conformance/advice.json). */
export function localAdvice(o: ReportOptions, attempt: number): Advice {
  const type = (o.errorType ?? "").toLowerCase();
  if (QUOTA_WORDS.some((w) => type.includes(w))) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: `quota or spend cap exhausted (${type}) (daemon unreachable)` };
  }
  if (o.status >= 200 && o.status < 300 && !type) {
    return { action: "done", retryAfterMs: 0, fallbackKey: "", reason: "" };
  }
  if (type === CANCELLED && (o.status === 0 || (o.status >= 200 && o.status < 300))) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: "the caller gave up on the request" };
  }
  let retryable = o.status === 0 || RETRYABLE.has(o.status) || o.status >= 500;
  if (o.status >= 200 && o.status < 300) {
    retryable = !o.streamStarted && (type.includes("overloaded") || type.includes("rate_limit"));
  }
  if (!retryable || attempt >= FAIL_OPEN_ATTEMPTS) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: `status ${o.status} (daemon unreachable)` };
  }
  const h = limitHeaders(o.headers);
  // The provider's delay, up to a minute (conformance/advice.json).
  const header = Math.min(60_000, Number(h["retry-after-ms"] ?? NaN) || Number(h["retry-after"] ?? NaN) * 1000);
  const backoff = Math.min(30_000, 1000 * 2 ** (attempt - 1)) * Math.random();
  return {
    action: "retry",
    retryAfterMs: Math.max(Number.isFinite(header) ? header : 0, backoff),
    fallbackKey: "",
    reason: `status ${o.status} (daemon unreachable)`,
  };
}

/** Usage in any provider's shape, as [all input (cached included), cached input, output]. */
/** The usage of a JSON answer: its `usage` (OpenAI, Anthropic, Responses) or `usageMetadata`
 * (Gemini). */
export function usageOf(body: unknown): [number, number, number] | null {
  if (!body || typeof body !== "object") {
    return null;
  }
  const b = body as { usage?: unknown; usageMetadata?: unknown };
  return parseUsage(b.usage ?? b.usageMetadata);
}

export function parseUsage(u: unknown): [number, number, number] | null {
  if (!u || typeof u !== "object") {
    return null;
  }
  const o = u as Record<string, unknown>;
  const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null);
  const sub = (v: unknown, k: string): unknown => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined);
  const prompt = int(o.prompt_tokens);
  if (prompt !== null) {
    const cached = int(sub(o.prompt_tokens_details, "cached_tokens")) ?? 0;
    return [prompt, Math.min(cached, prompt), int(o.completion_tokens) ?? 0];
  }
  const gp = int(o.promptTokenCount);
  if (gp !== null) {
    // Thinking tokens are output too (billed as such), beside the candidates'.
    return [gp, Math.min(int(o.cachedContentTokenCount) ?? 0, gp), (int(o.candidatesTokenCount) ?? 0) + (int(o.thoughtsTokenCount) ?? 0)];
  }
  const inp = int(o.input_tokens);
  const out = int(o.output_tokens);
  if (inp === null && out === null) {
    return null;
  }
  const read = int(o.cache_read_input_tokens);
  const written = int(o.cache_creation_input_tokens);
  if (read !== null || written !== null) {
    return [(inp ?? 0) + (read ?? 0) + (written ?? 0), read ?? 0, out ?? 0];
  }
  const cached = int(sub(o.input_tokens_details, "cached_tokens")) ?? 0;
  return [inp ?? 0, Math.min(cached, inp ?? 0), out ?? 0];
}
