/** The options and answers of the client's calls. */

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
  /** When the answer (its status and headers) reached the caller, Unix ms (`Date.now()`);
   * default: when the report is sent. A window the provider keeps frees the request's place a
   * second after it. */
  answeredUnixMs?: number;
}

/** What the daemon advises after a report. `retryAfterMs` is how long to wait before a retry;
 * `fallbackKey` the key to try instead. */
export interface Advice {
  /** "unknown": an advice this client does not know (a newer daemon's); nothing is retried. */
  action: "done" | "retry" | "give_up" | "fallback" | "unknown";
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

