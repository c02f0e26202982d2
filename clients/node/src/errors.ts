/** The errors the llmctl client throws. */

/** Base of every error the client throws. `code` is the gRPC status name when the daemon
 * answered with an error ("INVALID_ARGUMENT", "NOT_FOUND", ...). */
export class LlmctlError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** No daemon answered on the socket (thrown with `failMode: "closed"`). */
export class Unavailable extends LlmctlError {
  readonly socket: string;
  constructor(message: string, socket: string) {
    super(message, "UNAVAILABLE");
    this.socket = socket;
  }
}

/** Why the daemon did not grant, for a program (the proto's RefusalReason, in lower case). */
export type ReasonCode =
  | "capacity"
  | "concurrency"
  | "cooldown"
  | "breaker_open"
  | "run_budget"
  | "route_group"
  | "stopping"
  | "too_large"
  | "daily_quota"
  /** A plan window (5-hour, 7-day) of the key's account is closed until `notBefore`. */
  | "plan_window"
  /** The caller withdrew the call (an abort) before it was granted. */
  | "cancelled"
  /** The daemon is away and what this client last knew of the key allows no call in time. */
  | "fail_static"
  | `${number}`
  | "";

/** The daemon could not grant the lease within `maxWait`. `notBefore` is the earliest time asking
 * again may succeed (null when unknown); `reason` says why in words, `reasonCode` for a program. */
export class NotGranted extends LlmctlError {
  readonly key: string;
  readonly reason: string;
  readonly reasonCode: ReasonCode;
  readonly notBefore: Date | null;
  readonly waitedMs: number;
  constructor(key: string, reason: string, reasonCode: ReasonCode, notBefore: Date | null, waitedMs: number) {
    const when = notBefore ? `; ask again after ${notBefore.toISOString()}` : "";
    super(`llmctl did not grant ${JSON.stringify(key)} in time: ${reason || "no capacity"}${when}`);
    this.key = key;
    this.reason = reason;
    this.reasonCode = reasonCode;
    this.notBefore = notBefore;
    this.waitedMs = waitedMs;
  }

  /** Milliseconds from now until `notBefore` (0 once it has passed), or null when unknown. */
  get retryAfterMs(): number | null {
    return this.notBefore ? Math.max(0, this.notBefore.getTime() - Date.now()) : null;
  }
}

/** The run (`runId` on acquire) used up its budget of calls, retries or wall time: asking again
 * does not help until the budget is raised. */
export class RunBudgetExceeded extends NotGranted {
  readonly runId: string;
  constructor(key: string, reason: string, notBefore: Date | null, waitedMs: number, runId: string) {
    super(key, reason, "run_budget", notBefore, waitedMs);
    this.runId = runId;
    this.message = `llmctl refused ${JSON.stringify(key)} for run ${JSON.stringify(runId)}: ${reason}`;
  }
}

/** Malformed input: an empty key, a negative size, a status that is no HTTP status, ... */
export class InvalidArgument extends LlmctlError {
  constructor(message: string) {
    super(message, "INVALID_ARGUMENT");
  }
}

/** The daemon does not know the lease (reported twice, or expired and settled). */
export class LeaseNotFound extends LlmctlError {
  constructor(message: string) {
    super(message, "NOT_FOUND");
  }
}

/** The store lost records: the daemon cannot say whether this job was done before. Claim again
 * with `acceptLostHistory: true` to take the claim anyway. */
export class ClaimHistoryLost extends LlmctlError {
  constructor(message: string) {
    super(message, "DATA_LOSS");
  }
}

/** Whether `err` is a `NotGranted`, or wraps one in its `.cause` (openai's Node SDK throws
 * `APIConnectionError("Connection error.")` with the `NotGranted` from `limitedFetch` as its
 * cause). */
export function isNotGranted(err: unknown): err is NotGranted {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof NotGranted) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
