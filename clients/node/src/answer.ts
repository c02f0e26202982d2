/** Reading a provider's answer for its report: usage from a JSON body or from server-sent
 * events as they go by, and the error type and message of an error body. */

import { parseUsage } from "./client.js";
import { CONTENT_TYPE as AWS_EVENT_STREAM, EventStreamParser } from "./eventstream.js";

/** (error type, message) from a provider's error body, or ["", ""] when it names none: OpenAI
 * `{"error": {"type", "code", "message"}}` (a string code is the more precise), Anthropic
 * `{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"status", "message"}}`. */
export function errorInfo(body: unknown): [string, string] {
  if (!body || typeof body !== "object") {
    return ["", ""];
  }
  const b = body as Record<string, unknown>;
  let err = b.error as Record<string, unknown> | undefined;
  if (!err || typeof err !== "object") {
    const t = b.type;
    if (t === "error" || "code" in b || (typeof t === "string" && t.endsWith("_error"))) {
      err = b;
    } else {
      return ["", ""];
    }
  }
  let type = "";
  for (const c of [err.code, err.type, err.status]) {
    if (typeof c === "string" && c && c !== "error") {
      type = c;
      break;
    }
  }
  const message = typeof err.message === "string" ? err.message : "";
  return [type, message + details(err.details) + resets(err)];
}

/** Codex's plan reset beside its message (`resets_at`, `resets_in_seconds`), as
 * ` [resets_at=…; resets_in_seconds=…]` in whole seconds (the daemon reads until when a plan
 * window is closed from it); "" when there is none. */
function resets(err: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const k of ["resets_at", "resets_in_seconds"]) {
    const v = err[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) {
      parts.push(`${k}=${Math.floor(v)}`);
    }
  }
  return parts.length ? ` [${parts.join("; ")}]` : "";
}

/** What Gemini puts beside its message in `details`: the quota's id (`…PerDay…` or
 * `…PerMinute…`) and the retry delay, as ` [quotaId=…; retryDelay=20s]` (the daemon reads whether
 * a refusal is per day from it); "" when there is none. */
function details(d: unknown): string {
  if (!Array.isArray(d)) {
    return "";
  }
  const parts: string[] = [];
  for (const item of d.slice(0, 8)) {
    if (!item || typeof item !== "object") {
      continue;
    }
    const o = item as Record<string, unknown>;
    const violations = Array.isArray(o.violations) ? o.violations.slice(0, 8) : [];
    for (const v of violations) {
      const id = v && typeof v === "object" ? (v as Record<string, unknown>).quotaId : undefined;
      if (typeof id === "string" && id) {
        parts.push(`quotaId=${id.slice(0, 128)}`);
      }
    }
    if (typeof o.retryDelay === "string" && o.retryDelay) {
      parts.push(`retryDelay=${o.retryDelay.slice(0, 32)}`);
    }
  }
  return parts.length ? ` [${parts.join("; ")}]` : "";
}

/** What a stream of server-sent events said by its end. */
export interface StreamOutcome {
  usage: [number, number, number] | null;
  errorType: string;
  errorMessage: string;
  /** Whether output reached the caller. */
  output: boolean;
}

/** Watches server-sent events go by (the WHATWG rules, fed in byte chunks of any size). */
/** Bedrock's invocation metrics in Anthropic's usage terms (input excludes the cache's tokens). */
const BEDROCK_METRICS: [string, string][] = [
  ["inputTokenCount", "input_tokens"],
  ["outputTokenCount", "output_tokens"],
  ["cacheReadInputTokenCount", "cache_read_input_tokens"],
  ["cacheWriteInputTokenCount", "cache_creation_input_tokens"],
];

export class EventWatcher {
  private decoder = new TextDecoder();
  private pending = "";
  private data: string[] = [];
  private event = "";
  private usage: Record<string, unknown> = {};
  /** Bedrock's invocation metrics, for a model whose own events carry no usage. */
  private metrics: Record<string, unknown> = {};
  /** Set for AWS event-stream answers (Bedrock's), which are frames, not lines. */
  private frames: EventStreamParser | null;
  readonly outcome: StreamOutcome = { usage: null, errorType: "", errorMessage: "", output: false };

  /** `contentType`: the answer's; server-sent events unless it is AWS's event stream. */
  constructor(contentType = "") {
    this.frames = contentType.toLowerCase().includes(AWS_EVENT_STREAM) ? new EventStreamParser() : null;
  }

  feed(chunk: Uint8Array): void {
    if (this.frames) {
      for (const [event, data] of this.frames.feed(chunk)) {
        this.dispatch(event, data);
      }
      return;
    }
    this.pending += this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.pending.search(/\r\n|\r|\n/)) >= 0) {
      // A "\r" that ends what came so far may be the first half of a "\r\n": wait for more.
      if (this.pending[nl] === "\r" && nl === this.pending.length - 1) {
        break;
      }
      const line = this.pending.slice(0, nl);
      const skip = this.pending.startsWith("\r\n", nl) ? 2 : 1;
      this.pending = this.pending.slice(nl + skip);
      this.line(line);
    }
    if (this.pending.length > 1 << 20) {
      this.pending = "";
    }
  }

  finish(): StreamOutcome {
    this.pending += this.decoder.decode();
    if (this.pending) {
      this.line(this.pending);
      this.pending = "";
    }
    this.line("");
    const known = Object.keys(this.usage).length ? this.usage : Object.keys(this.metrics).length ? this.metrics : null;
    const u = known ? parseUsage(known) : null;
    this.outcome.usage = u;
    return this.outcome;
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length) {
        this.dispatch(this.event || "message", this.data.join("\n"));
      }
      this.event = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) {
      return;
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (name === "event") {
      this.event = value;
    } else if (name === "data") {
      this.data.push(value);
    }
  }

  /** One event already taken out of its stream (`data`: its JSON text), as if it had come. */
  feedEvent(name: string, data: string): void {
    this.dispatch(name, data);
  }

  private dispatch(event: string, data: string): void {
    if (data === "[DONE]") {
      return;
    }
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    if (!obj || typeof obj !== "object") {
      return;
    }
    const kind = typeof obj.type === "string" ? obj.type : event;
    const failed = kind === "response.failed" || kind === "response.incomplete";
    if (obj.error || kind === "error" || event === "error" || failed) {
      // The first error is the one that ended the stream.
      if (!this.outcome.errorType) {
        const inner = failed ? (obj.response as Record<string, unknown> | undefined)?.error : undefined;
        const [t, m] = errorInfo(inner ? { error: inner } : obj.error ? obj : { error: obj });
        this.outcome.errorType = t || (failed ? kind : "stream_error");
        this.outcome.errorMessage = m;
      }
      if (!failed) {
        return;
      }
    }
    const metrics = obj["amazon-bedrock-invocationMetrics"];
    if (metrics && typeof metrics === "object") {
      for (const [theirs, ours] of BEDROCK_METRICS) {
        const v = (metrics as Record<string, unknown>)[theirs];
        if (typeof v === "number") {
          this.metrics[ours] = v;
        }
      }
    }
    // OpenAI chat chunks and Responses events; Anthropic message_start / message_delta;
    // Gemini's usageMetadata.
    const holders = [obj, obj.message, obj.response];
    for (const h of holders) {
      for (const name of ["usage", "usageMetadata"]) {
        const u = h && typeof h === "object" ? (h as Record<string, unknown>)[name] : undefined;
        if (u && typeof u === "object") {
          for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
            if (v !== null && v !== undefined) {
              this.usage[k] = v;
            }
          }
        }
      }
    }
    const choices = obj.choices;
    const said = (d: Record<string, unknown> | undefined): boolean =>
      !!d && ["content", "tool_calls", "refusal", "function_call", "reasoning_content"].some((k) => {
        const v = d[k];
        return Array.isArray(v) ? v.length > 0 : !!v;
      });
    if (Array.isArray(choices) && choices.some((c) => c && typeof c === "object" && said((c as { delta?: Record<string, unknown> }).delta))) {
      this.outcome.output = true;
    }
    if (kind === "content_block_delta" || (kind.startsWith("response.") && kind.endsWith(".delta"))) {
      this.outcome.output = true;
    }
    // Gemini: a candidate with any part.
    const candidates = obj.candidates;
    if (
      Array.isArray(candidates) &&
      candidates.some((c) => {
        const parts = (c as { content?: { parts?: unknown } } | null)?.content?.parts;
        return Array.isArray(parts) && parts.some((p) => p && typeof p === "object" && Object.keys(p).length > 0);
      })
    ) {
      this.outcome.output = true;
    }
  }
}
