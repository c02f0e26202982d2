/**
 * The llmctl client for Node: every process asks the host's llmctl daemon before it calls an
 * LLM API, over the daemon's Unix socket. See README.md.
 */
export { Client, Lease, MAX_WAIT_MS, limitHeaders, parseUsage, usageOf, reasonCode, localAdvice, FAIL_OPEN_ATTEMPTS, type AcquireOptions, type Advice, type Claim, type ClaimState, type ClientOptions, type FailMode, type HeadersLike, type ReportOptions, } from "./client.js";
export { ClaimHistoryLost, InvalidArgument, LeaseNotFound, LlmctlError, NotGranted, isNotGranted, RunBudgetExceeded, Unavailable, type ReasonCode, } from "./errors.js";
export { DEFAULT_OUTPUT_TOKENS, estimateBody, type Estimate } from "./estimate.js";
export { errorInfo, EventWatcher, type StreamOutcome } from "./answer.js";
export { limitedFetch, type LimitedFetchOptions } from "./fetch.js";
export * as aws from "./aws.js";
export { pathCall, type PathCall } from "./paths.js";
export { askUsage, refusesUsage, Unasked, withoutMember } from "./streamusage.js";
export { defaultSocket } from "./socket.js";
export { adviceOf } from "./wire.js";
export { FAIL_STATIC_FOR_MS, FailStatic, RESTART_WAIT_MS, WINDOW_MS, outagePhase, staticLimits, type StaticLimits } from "./failstatic.js";
/** The generated messages and service, for calls the wrapper does not cover. */
export * as pb from "./gen/llmctl/v1/limiter_pb.js";
