/**
 * The llmctl client: ask the daemon before each provider call (`acquire`), tell it what happened
 * (`lease.report`), and follow its advice. Mirrors the Python client.
 */

import * as net from "node:net";
import * as os from "node:os";
import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient, type Client as RpcClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Advice as PbAdvice,
  ClaimResponse_State,
  Limiter,
  RefusalReason,
  type AcquireResponse,
  type StatusResponse,
} from "./gen/llmctl/v1/limiter_pb.js";
import {
  ClaimHistoryLost,
  InvalidArgument,
  LeaseNotFound,
  LlmctlError,
  NotGranted,
  RunBudgetExceeded,
  Unavailable,
  type ReasonCode,
} from "./errors.js";
import { SessionKeeper } from "./session.js";
import { defaultSocket } from "./socket.js";
import { answers, autostartEnabled, ensureDaemon } from "./autostart.js";
import { FAIL_STATIC_FOR_MS, FailStatic, RESTART_WAIT_MS, outagePhase } from "./failstatic.js";

/** What to do while the daemon is unreachable: "open" grants unlimited leases (and warns once),
 * "closed" throws `Unavailable`. */
export type FailMode = "open" | "closed";

export interface ClientOptions {
  /** The daemon's socket; default: `defaultSocket()`. */
  socket?: string;
  /** Default "open". */
  failMode?: FailMode;
  /** Ties leases to this client's Session; default: host-pid-random. */
  clientId?: string;
  /** Bound on calls other than a waiting acquire, in ms (default 10,000). */
  callTimeoutMs?: number;
  /** While the daemon is away (after waiting 5 s for a restart), keys are limited with what this
   * client last knew of them for this long, in ms, then calls fail open (default 60,000). */
  failStaticFor?: number;
}

/** The daemon's bound on waiting, and the client's default: an hour. */
export const MAX_WAIT_MS = 3_600_000;

export interface AcquireOptions {
  /** Requests to reserve (default 1). */
  requests?: number;
  /** Input tokens the call will send (estimate). */
  inputTokens?: number;
  /** Output tokens it may produce (its max_tokens). */
  outputTokens?: number;
  /** false: the call names no max_tokens; the daemon reserves what answers on the key produced
   * lately (`outputTokens` until any answer came) and settles at what it produces. */
  outputTokensDeclared?: boolean;
  /** Higher goes first among waiters (default 0). */
  priority?: number;
  /** How long the daemon may hold the call waiting, in ms (default an hour; 0 answers at once). */
  maxWait?: number;
  /** Counts the call against this run's budget. */
  runId?: string;
  /** Ask for the first member of this configured group that can serve, instead of `key`. */
  routeGroup?: string;
  /** The retry profile of the advice ("interactive", "batch" or a configured one). */
  profile?: string;
  /** This call's attempt, from 1 (default 1). */
  attempt?: number;
  /** When attempt 1 started (a Date, or Unix milliseconds): the profile's total deadline counts
   * from it; left out, from this lease's grant. */
  firstAttempt?: Date | number;
  /** Aborts the wait: the call leaves the daemon's queue and the promise rejects. */
  signal?: AbortSignal;
}

/** Headers as fetch, Node or a plain object give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined> | Iterable<[string, string]>;

export interface ReportOptions {
  /** HTTP status of the provider's answer; 0 when none came (timeout, connection error). */
  status: number;
  /** The answer's headers: the rate-limit and retry ones are read. */
  headers?: HeadersLike;
  /** All input tokens, cached included. Left out: unknown, settled at the estimate. */
  inputTokens?: number;
  cachedInputTokens?: number;
  outputTokens?: number;
  /** The provider's error type or code ("rate_limit_exceeded", "overloaded_error"). */
  errorType?: string;
  errorMessage?: string;
  /** Whether output reached the caller before it failed. */
  streamStarted?: boolean;
  /** Whether the counts are the provider's usage; default: whether any count was given. */
  usageKnown?: boolean;
  /** Default: the lease's attempt. */
  attempt?: number;
}

/** What the daemon advises after a report. `retryAfterMs` is how long to wait before a retry;
 * `fallbackKey` the key to try instead. */
export interface Advice {
  action: "done" | "retry" | "give_up" | "fallback";
  retryAfterMs: number;
  fallbackKey: string;
  reason: string;
}

export type ClaimState = "claimed" | "pending" | "done";

export interface Claim {
  state: ClaimState;
  /** The stored result, when done. */
  result?: Uint8Array;
  /** When the other holder claimed it, when pending. */
  since?: Date;
}

const LIMIT_HEADER_PREFIXES = ["x-ratelimit-", "anthropic-ratelimit-", "ratelimit"];
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

function newClientId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

function count(name: string, v: number | undefined, dflt: number): bigint {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new InvalidArgument(`${name} must be a whole number of 0 or more, not ${String(v)}`);
  }
  return BigInt(n);
}

export function reasonCode(code: RefusalReason): ReasonCode {
  switch (code) {
    case RefusalReason.CAPACITY:
      return "capacity";
    case RefusalReason.CONCURRENCY:
      return "concurrency";
    case RefusalReason.COOLDOWN:
      return "cooldown";
    case RefusalReason.BREAKER_OPEN:
      return "breaker_open";
    case RefusalReason.RUN_BUDGET:
      return "run_budget";
    case RefusalReason.ROUTE_GROUP:
      return "route_group";
    case RefusalReason.STOPPING:
      return "stopping";
    case RefusalReason.TOO_LARGE:
      return "too_large";
    case RefusalReason.DAILY_QUOTA:
      return "daily_quota";
    case RefusalReason.UNSPECIFIED:
      return "";
    default:
      // A reason newer than this client: its number, never a guess.
      return `${Number(code)}`;
  }
}

/** `firstAttempt` as Unix ms (0: not given). Seconds are refused: they would read as 1970. */
function unixMs(v: Date | number | undefined): number {
  if (v === undefined) {
    return 0;
  }
  const ms = v instanceof Date ? v.getTime() : v;
  if (!Number.isFinite(ms) || ms < 1e11 || ms > 1e14) {
    throw new InvalidArgument(`firstAttempt must be a Date or Unix milliseconds (like Date.now()), not ${String(v)}`);
  }
  return Math.round(ms);
}

function int32(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new InvalidArgument(`${name} must be a whole number (a 32-bit one), not ${String(v)}`);
  }
  return n;
}

/** The longest client id, run id or other name the daemon takes, in bytes. */
const MAX_NAME_BYTES = 256;

function checkName(name: string, v: string): string {
  // eslint-disable-next-line no-control-regex
  if (Buffer.byteLength(v) > MAX_NAME_BYTES || /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(v)) {
    throw new InvalidArgument(`${name} ${JSON.stringify(v.slice(0, 64))} must be at most ${MAX_NAME_BYTES} bytes of visible characters`);
  }
  return v;
}

function fromUnixMs(ms: bigint): Date | null {
  return ms > 0n ? new Date(Number(ms)) : null;
}

/** A daemon error as the client's own. */
function translate(e: unknown, socket: string): unknown {
  if (!(e instanceof ConnectError)) {
    return e;
  }
  if (unreachable(e)) {
    return new Unavailable(`no llmctl daemon answered on ${socket}: ${e.rawMessage}`, socket);
  }
  switch (e.code) {
    case Code.InvalidArgument:
      return new InvalidArgument(e.rawMessage);
    case Code.NotFound:
      return new LeaseNotFound(e.rawMessage);
    case Code.DataLoss:
      return new ClaimHistoryLost(e.rawMessage);
    default:
      return new LlmctlError(e.rawMessage, Code[e.code]?.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase());
  }
}

/** Errors of the socket itself: no daemon listening, or it went away mid-call. */
const SOCKET_ERRORS = new Set(["ENOENT", "ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTSOCK", "ENOTDIR", "EACCES"]);

function unreachable(e: unknown): boolean {
  if (!(e instanceof ConnectError)) {
    return false;
  }
  const cause = (e.cause as { code?: unknown } | undefined)?.code;
  // A daemon that does not answer within the call's bound (stopped, or stuck) is as absent, and
  // so is one whose connection closed under a call (its HTTP/2 stream cancelled: callers check
  // their own abort signal before asking this).
  return (
    e.code === Code.Unavailable ||
    e.code === Code.DeadlineExceeded ||
    (e.code === Code.Canceled && /stream closed|CANCEL/.test(e.rawMessage)) ||
    (typeof cause === "string" && SOCKET_ERRORS.has(cause))
  );
}

/** Advice computed without the daemon (fail-open): retry what a retry may fix, a few times. */
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

/** A granted reservation. Report it once with what happened. */
export class Lease {
  private done = false;
  /** @internal Called once, at the first report: the client counts its leases in flight per key. */
  onDone: (() => void) | null = null;
  /** @internal The client's epoch when the lease was granted. */
  epoch = 0;
  constructor(
    private readonly client: Client,
    /** The key granted (the member, when a route group was asked for). */
    readonly key: string,
    readonly leaseId: string,
    /** False for a fail-open lease granted without the daemon. */
    readonly limited: boolean,
    readonly waitedMs: number,
    readonly expiresAt: Date | null,
    readonly attempt: number,
    private readonly firstAttemptMs: number,
  ) {}

  get reported(): boolean {
    return this.done;
  }

  /** Settles the lease with what happened and returns the daemon's advice. */
  async report(o: ReportOptions): Promise<Advice> {
    if (this.done) {
      throw new LlmctlError(`lease ${this.leaseId} was reported already`);
    }
    if (!Number.isInteger(o.status) || o.status < 0 || o.status > 999) {
      throw new InvalidArgument(`status must be an HTTP status (or 0 for no answer), not ${String(o.status)}`);
    }
    // Everything is checked before the lease counts as reported: a mistake can be corrected.
    const attempt = int32("attempt", o.attempt, this.attempt);
    const given = o.inputTokens !== undefined || o.outputTokens !== undefined;
    const req = {
      leaseId: this.leaseId,
      statusCode: o.status,
      headers: limitHeaders(o.headers),
      inputTokens: count("inputTokens", o.inputTokens, 0),
      cachedInputTokens: count("cachedInputTokens", o.cachedInputTokens, 0),
      outputTokens: count("outputTokens", o.outputTokens, 0),
      errorType: o.errorType ?? "",
      errorMessage: o.errorMessage ?? "",
      streamStarted: o.streamStarted ?? false,
      attempt,
      usageKnown: o.usageKnown ?? given,
      firstAttemptUnixMs: BigInt(this.firstAttemptMs),
    };
    this.done = true;
    const onDone = this.onDone;
    this.onDone = null;
    onDone?.();
    if (!this.limited) {
      return localAdvice(o, attempt);
    }
    try {
      return await this.client.sendReport(req, o, attempt, this.epoch);
    } catch (e) {
      // Not heard: the same report may be sent again (a settled lease answers NOT_FOUND).
      if (!(e instanceof LeaseNotFound)) {
        this.done = false;
      }
      throw e;
    }
  }

  /** Reports from a fetch `Response` (status and headers; read usage from its body yourself, or
   * use `limitedFetch`), or from an SDK result with `.usage` (a success). */
  async reportResponse(response: unknown): Promise<Advice> {
    if (response instanceof Response) {
      return this.report({ status: response.status, headers: response.headers });
    }
    const usage = usageOf(response);
    if (usage) {
      return this.report({ status: 200, inputTokens: usage[0], cachedInputTokens: usage[1], outputTokens: usage[2] });
    }
    return this.report({ status: 200 });
  }
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

const ACTIONS: Record<number, Advice["action"]> = {
  [PbAdvice.DONE]: "done",
  [PbAdvice.RETRY]: "retry",
  [PbAdvice.GIVE_UP]: "give_up",
  [PbAdvice.FALLBACK]: "fallback",
};

/** While failing open, a warning at most this often. */
const WARN_EVERY_MS = 60_000;

function stopping(resp: AcquireResponse): boolean {
  return !resp.granted && resp.reasonCode === RefusalReason.STOPPING;
}

/** A client of the daemon on one socket. Keeps a Session open that never holds the Node
 * process alive on its own; `close()` ends it. */
export class Client {
  readonly socket: string;
  readonly failMode: FailMode;
  readonly clientId: string;
  private readonly rpc: RpcClient<typeof Limiter>;
  private readonly session: SessionKeeper;
  private readonly callTimeoutMs: number;
  private warnedAt: number | null = null;
  private closed = false;
  /** Whether the last acquire was limited by the daemon (null before any): false while failing
   * open, so a wrong socket or a stopped daemon does not go unnoticed. */
  limited: boolean | null = null;
  /** Settles once a daemon started on first use answers (at once when none is started). */
  private readonly ready: Promise<unknown>;
  /** Whether the daemon ever answered this client, and since when it has not (null: it does). */
  private answered = false;
  private downSince: number | null = null;
  /** @internal Bumped whenever the daemon may have lost its leases (it went away): a lease
   * from an earlier epoch that the daemon no longer knows was lost, not misused. */
  epoch = 0;
  /** What this client knows of each key, to limit with while the daemon is away. */
  private readonly static = new FailStatic();
  readonly failStaticForMs: number;

  constructor(options: ClientOptions = {}) {
    this.socket = options.socket ?? defaultSocket();
    // No socket named: where no daemon answers on the default one, start one (autostart.ts).
    this.ready = options.socket === undefined && autostartEnabled() ? ensureDaemon(this.socket) : Promise.resolve();
    this.failMode = options.failMode ?? "open";
    this.failStaticForMs = options.failStaticFor ?? FAIL_STATIC_FOR_MS;
    if (!Number.isFinite(this.failStaticForMs) || this.failStaticForMs < 0) {
      throw new InvalidArgument(`failStaticFor is in milliseconds, 0 or more; got ${String(options.failStaticFor)}`);
    }
    if (this.failMode !== "open" && this.failMode !== "closed") {
      throw new InvalidArgument(`failMode must be "open" or "closed", not ${JSON.stringify(this.failMode)}`);
    }
    this.clientId = checkName("clientId", options.clientId ?? newClientId());
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    const transport = createGrpcTransport({
      baseUrl: "http://localhost",
      nodeOptions: { createConnection: () => net.connect(this.socket) },
    });
    this.rpc = createClient(Limiter, transport);
    this.session = new SessionKeeper(this.socket, this.clientId);
    this.session.onLost = () => {
      this.epoch += 1;
    };
  }

  /** Whether the Session with the daemon is open right now. */
  get connected(): boolean {
    return this.session.connected;
  }

  /** Resolves true once the Session is open, false when `timeoutMs` passes first. */
  waitConnected(timeoutMs = 10_000): Promise<boolean> {
    this.checkOpen();
    return this.session.waitConnected(timeoutMs);
  }

  /** Ends the Session (the daemon releases this client's slots). */
  close(): void {
    this.closed = true;
    this.session.close();
  }

  private checkOpen(): void {
    if (this.closed) {
      throw new LlmctlError("this llmctl Client is closed; create a new one");
    }
  }

  private failOpen(e: unknown, stopping = false): boolean {
    if (this.failMode !== "open" || !(stopping || unreachable(e))) {
      return false;
    }
    if (this.downSince === null) {
      this.downSince = Date.now();
      this.epoch += 1;
    }
    const now = Date.now();
    if (this.warnedAt === null || now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      const why = e instanceof Error ? e.message : String(e);
      const what = this.answered
        ? `calls wait up to ${RESTART_WAIT_MS / 1000} s for it to come back, then are limited with what this client last knew of each key for up to ${this.failStaticForMs / 1000} s, then go unlimited until it is back`
        : "calls go unlimited until it is back";
      process.emitWarning(`llmctl: no daemon answering on ${this.socket} (${why}); ${what} (failMode "open")`);
    }
    return true;
  }

  /** Reserves capacity on `key` (and its ancestors), waiting in the daemon up to `maxWait` ms.
   * Throws `NotGranted` (or `RunBudgetExceeded`) when capacity will not come in time. */
  async acquire(key: string | null, options: AcquireOptions = {}): Promise<Lease> {
    this.checkOpen();
    await this.ready;
    const maxWait = options.maxWait ?? MAX_WAIT_MS;
    if (!Number.isFinite(maxWait) || maxWait < 0 || maxWait > MAX_WAIT_MS) {
      throw new InvalidArgument(`maxWait is in milliseconds, from 0 to ${MAX_WAIT_MS}; got ${String(options.maxWait)}`);
    }
    const attempt = int32("attempt", options.attempt, 1);
    const firstMs = unixMs(options.firstAttempt);
    const req = {
      key: key ?? "",
      requests: count("requests", options.requests, 1),
      inputTokens: count("inputTokens", options.inputTokens, 0),
      outputTokens: count("outputTokens", options.outputTokens, 0),
      priority: int32("priority", options.priority, 0),
      maxWaitMs: BigInt(Math.ceil(maxWait)),
      clientId: this.clientId,
      runId: checkName("runId", options.runId ?? ""),
      routeGroup: options.routeGroup ?? "",
      profile: options.profile ?? "",
      outputTokensDeclared: options.outputTokensDeclared,
    };
    const call = () => this.rpc.acquire(req, { timeoutMs: maxWait + this.callTimeoutMs, signal: options.signal });
    let resp: AcquireResponse | null = null;
    let epoch = this.epoch;
    for (;;) {
      epoch = this.epoch;
      try {
        resp = await call();
      } catch (e) {
        if (options.signal?.aborted) {
          throw options.signal.reason;
        }
        if (!this.failOpen(e)) {
          throw translate(e, this.socket);
        }
      }
      if (resp !== null && stopping(resp) && this.failMode === "open") {
        // A stopping daemon is an unreachable one.
        this.failOpen(Object.assign(new Error("the daemon is stopping"), { code: "UNAVAILABLE_STOPPING" }), true);
        resp = null;
      }
      if (resp === null) {
        // Failing open, unless the daemon is only restarting: then the call waits for it.
        resp = await this.afterRestart(call, options.signal);
      }
      if (resp === null && this.phase() !== "up") {
        // Then limited with what this client last knew of the key, or not at all.
        const name = key ?? options.routeGroup ?? "";
        const turn = await this.staticTurn(name, maxWait, options.signal);
        if (turn !== "back") {
          this.limited = false;
          const lease = new Lease(this, name, "", false, 0, null, attempt, firstMs);
          if (turn === "paced") lease.onDone = () => this.static.released(name);
          return lease;
        }
      }
      if (resp !== null) break;
      // Another call found the daemon back while this one waited: it asks it too.
    }
    this.answered = true;
    this.downSince = null;
    this.limited = true;
    const asked = resp.key || key || options.routeGroup || "";
    if (!resp.granted) {
      const notBefore = fromUnixMs(resp.notBeforeUnixMs);
      const waited = Number(resp.waitedMs);
      if (resp.reasonCode === RefusalReason.RUN_BUDGET) {
        throw new RunBudgetExceeded(asked, resp.reason, notBefore, waited, req.runId);
      }
      throw new NotGranted(asked, resp.reason, reasonCode(resp.reasonCode), notBefore, waited);
    }
    const lease = new Lease(this, asked, resp.leaseId, true, Number(resp.waitedMs), fromUnixMs(resp.expiresUnixMs), attempt, firstMs);
    lease.epoch = epoch;
    this.static.granted(asked, Date.now());
    lease.onDone = () => this.static.released(asked);
    return lease;
  }

  /** The phase of the daemon's absence (conformance/fail_static.json), "up" while it answers. */
  private phase(): "up" | "wait" | "static" | "open" {
    if (this.downSince === null) return "up";
    return outagePhase(Date.now() - this.downSince, this.answered, this.failStaticForMs);
  }

  /** While the daemon is away past its restart: waits for `name`'s turn at the rate and
   * concurrency this client was getting on it, up to `maxWaitMs`: whether the call was paced
   * and counted in flight ("paced"), not limited ("unlimited": nothing known of the key, or
   * past failStaticFor), or the daemon is back ("back": ask it). */
  private async staticTurn(name: string, maxWaitMs: number, signal?: AbortSignal): Promise<"paced" | "unlimited" | "back"> {
    const giveUp = Date.now() + maxWaitMs;
    while (this.phase() === "static" && this.downSince !== null) {
      const now = Date.now();
      const delay = this.static.take(name, this.downSince, now);
      if (delay === null) return "unlimited";
      if (delay === 0) return "paced";
      if (now + delay > giveUp) {
        throw new NotGranted(
          name,
          `the llmctl daemon on ${this.socket} is away, and what this client last knew of the key (its grant rate and concurrency) allows no call within maxWait`,
          "fail_static",
          null,
          maxWaitMs - (giveUp - now),
        );
      }
      if (signal?.aborted) throw signal.reason;
      await new Promise((r) => setTimeout(r, Math.min(delay, 100)));
    }
    return this.phase() === "up" ? "back" : "unlimited";
  }

  /** The answer of a daemon that answered this client before and went away less than
   * `RESTART_WAIT_MS` ago (restarting, most likely), once it is back, so that a restart sends
   * no call unlimited; null when it is not back in time. */
  private async afterRestart(call: () => Promise<AcquireResponse>, signal?: AbortSignal): Promise<AcquireResponse | null> {
    while (this.phase() === "wait") {
      if (signal?.aborted) {
        throw signal.reason;
      }
      if (await answers(this.socket)) {
        try {
          const resp = await call();
          if (!stopping(resp)) {
            return resp;
          }
        } catch (e) {
          if (signal?.aborted) {
            throw signal.reason;
          }
          if (!unreachable(e)) {
            throw translate(e, this.socket);
          }
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return null;
  }

  /** @internal Sends a lease's report. */
  async sendReport(
    req: Parameters<RpcClient<typeof Limiter>["report"]>[0],
    o: ReportOptions,
    attempt: number,
    epoch = this.epoch,
  ): Promise<Advice> {
    try {
      const r = await this.rpc.report(req, { timeoutMs: this.callTimeoutMs });
      // The daemon answers: an outage, if one began, is over.
      this.answered = true;
      this.downSince = null;
      return {
        action: ACTIONS[r.advice] ?? "done",
        retryAfterMs: Number(r.retryAfterMs),
        fallbackKey: r.fallbackKey,
        reason: r.reason,
      };
    } catch (e) {
      if (this.failOpen(e)) {
        return localAdvice(o, attempt);
      }
      const err = translate(e, this.socket);
      if (err instanceof LeaseNotFound && this.failMode === "open" && epoch !== this.epoch) {
        // The daemon went away since this lease was granted and took it along.
        return localAdvice(o, attempt);
      }
      throw err;
    }
  }

  /** Stops granting on `key` (and below it) for `ms`; never shortens a cooldown. Resolves to
   * when it ends (null with fail-open and no daemon). */
  async cooldown(key: string, ms: number, reason = ""): Promise<Date | null> {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.cooldown({ key, durationMs: count("ms", ms, 0), reason }, { timeoutMs: this.callTimeoutMs });
      return fromUnixMs(r.untilUnixMs);
    } catch (e) {
      if (this.failOpen(e)) {
        return null;
      }
      throw translate(e, this.socket);
    }
  }

  /** The daemon's state: keys, buckets, cooldowns, sessions, runs, clients. */
  async status(keyPrefix = ""): Promise<StatusResponse> {
    this.checkOpen();
    await this.ready;
    try {
      return await this.rpc.status({ keyPrefix }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }

  /** Claims a job by its idempotency key: "claimed" (do it, then `complete`), "pending" (someone
   * else is doing it), or "done" with the stored result. */
  async claim(key: string, options: { ttlMs?: number; acceptLostHistory?: boolean } = {}): Promise<Claim> {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.claim(
        { key, ttlMs: count("ttlMs", options.ttlMs, 600_000), acceptLostHistory: options.acceptLostHistory ?? false },
        { timeoutMs: this.callTimeoutMs },
      );
      switch (r.state) {
        case ClaimResponse_State.CLAIMED:
          return { state: "claimed" };
        case ClaimResponse_State.PENDING:
          return { state: "pending", since: fromUnixMs(r.sinceUnixMs) ?? undefined };
        case ClaimResponse_State.DONE:
          return { state: "done", result: r.result };
        default:
          throw new LlmctlError(`the daemon answered claim state ${r.state}`);
      }
    } catch (e) {
      throw translate(e, this.socket);
    }
  }

  /** Stores the result of a claimed job and marks it done. */
  async complete(key: string, result: Uint8Array | string = new Uint8Array()): Promise<void> {
    this.checkOpen();
    await this.ready;
    const bytes = typeof result === "string" ? new TextEncoder().encode(result) : result;
    try {
      await this.rpc.complete({ key, result: bytes }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }
}

