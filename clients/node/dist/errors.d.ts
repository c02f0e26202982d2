/** The errors the llmctl client throws. */
/** Base of every error the client throws. `code` is the gRPC status name when the daemon
 * answered with an error ("INVALID_ARGUMENT", "NOT_FOUND", ...). */
export declare class LlmctlError extends Error {
    readonly code: string | undefined;
    constructor(message: string, code?: string);
}
/** No daemon answered on the socket (thrown with `failMode: "closed"`). */
export declare class Unavailable extends LlmctlError {
    readonly socket: string;
    constructor(message: string, socket: string);
}
/** Why the daemon did not grant, for a program (the proto's RefusalReason, in lower case). */
export type ReasonCode = "capacity" | "concurrency" | "cooldown" | "breaker_open" | "run_budget" | "route_group" | "stopping" | "too_large" | "daily_quota"
/** A plan window (5-hour, 7-day) of the key's account is closed until `notBefore`. */
 | "plan_window"
/** The caller withdrew the call (an abort) before it was granted. */
 | "cancelled"
/** The daemon is away and what this client last knew of the key allows no call in time. */
 | "fail_static" | `${number}` | "";
/** The daemon could not grant the lease within `maxWait`. `notBefore` is the earliest time asking
 * again may succeed (null when unknown); `reason` says why in words, `reasonCode` for a program. */
export declare class NotGranted extends LlmctlError {
    readonly key: string;
    readonly reason: string;
    readonly reasonCode: ReasonCode;
    readonly notBefore: Date | null;
    readonly waitedMs: number;
    constructor(key: string, reason: string, reasonCode: ReasonCode, notBefore: Date | null, waitedMs: number);
    /** Milliseconds from now until `notBefore` (0 once it has passed), or null when unknown. */
    get retryAfterMs(): number | null;
}
/** The run (`runId` on acquire) used up its budget of calls, retries or wall time: asking again
 * does not help until the budget is raised. */
export declare class RunBudgetExceeded extends NotGranted {
    readonly runId: string;
    constructor(key: string, reason: string, notBefore: Date | null, waitedMs: number, runId: string);
}
/** Malformed input: an empty key, a negative size, a status that is no HTTP status, ... */
export declare class InvalidArgument extends LlmctlError {
    constructor(message: string);
}
/** The daemon does not know the lease (reported twice, or expired and settled). */
export declare class LeaseNotFound extends LlmctlError {
    constructor(message: string);
}
/** The store lost records: the daemon cannot say whether this job was done before. Claim again
 * with `acceptLostHistory: true` to take the claim anyway. */
export declare class ClaimHistoryLost extends LlmctlError {
    constructor(message: string);
}
/** Whether `err` is a `NotGranted`, or wraps one in its `.cause` (openai's Node SDK throws
 * `APIConnectionError("Connection error.")` with the `NotGranted` from `limitedFetch` as its
 * cause). */
export declare function isNotGranted(err: unknown): err is NotGranted;
