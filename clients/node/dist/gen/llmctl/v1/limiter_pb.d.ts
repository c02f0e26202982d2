import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file llmctl/v1/limiter.proto.
 */
export declare const file_llmctl_v1_limiter: GenFile;
/**
 * @generated from message llmctl.v1.WithdrawRequest
 */
export type WithdrawRequest = Message<"llmctl.v1.WithdrawRequest"> & {
    /**
     * The acquire_id of an Acquire still waiting: it leaves the queue and answers at once, not
     * granted, with REFUSAL_REASON_CANCELLED. An Acquire already answered is not changed (a
     * grant it carries is the caller's to withdraw by lease_id); one not seen yet is refused
     * when it comes (for 30 s).
     *
     * @generated from field: string acquire_id = 1;
     */
    acquireId: string;
    /**
     * A granted lease whose request was never sent: every unit it took goes back, as if it was
     * never granted. Only the user (uid) that acquired it may. A lease already settled is left
     * as it is (withdrawn is false).
     *
     * @generated from field: string lease_id = 2;
     */
    leaseId: string;
};
/**
 * Describes the message llmctl.v1.WithdrawRequest.
 * Use `create(WithdrawRequestSchema)` to create a new message.
 */
export declare const WithdrawRequestSchema: GenMessage<WithdrawRequest>;
/**
 * @generated from message llmctl.v1.WithdrawResponse
 */
export type WithdrawResponse = Message<"llmctl.v1.WithdrawResponse"> & {
    /**
     * True when a waiting Acquire left the queue or a lease was given back.
     *
     * @generated from field: bool withdrawn = 1;
     */
    withdrawn: boolean;
};
/**
 * Describes the message llmctl.v1.WithdrawResponse.
 * Use `create(WithdrawResponseSchema)` to create a new message.
 */
export declare const WithdrawResponseSchema: GenMessage<WithdrawResponse>;
/**
 * @generated from message llmctl.v1.ResetRequest
 */
export type ResetRequest = Message<"llmctl.v1.ResetRequest"> & {
    /**
     * A key the daemon knows (INVALID_ARGUMENT otherwise); only that key, not its ancestors or
     * descendants.
     *
     * @generated from field: string key = 1;
     */
    key: string;
};
/**
 * Describes the message llmctl.v1.ResetRequest.
 * Use `create(ResetRequestSchema)` to create a new message.
 */
export declare const ResetRequestSchema: GenMessage<ResetRequest>;
/**
 * @generated from message llmctl.v1.ResetResponse
 */
export type ResetResponse = Message<"llmctl.v1.ResetResponse"> & {
    /**
     * Learned limits forgotten (buckets made or lowered by headers or probing).
     *
     * @generated from field: int64 learned_limits = 1;
     */
    learnedLimits: bigint;
    /**
     * Debt forgiven, in the units of the buckets that held it.
     *
     * @generated from field: double debt = 2;
     */
    debt: number;
    /**
     * True when a cooldown set on this very key was ended (one on an ancestor stays).
     *
     * @generated from field: bool cooldown_ended = 3;
     */
    cooldownEnded: boolean;
    /**
     * True when the key's circuit breaker was open (or half open) and is now closed.
     *
     * @generated from field: bool breaker_closed = 4;
     */
    breakerClosed: boolean;
};
/**
 * Describes the message llmctl.v1.ResetResponse.
 * Use `create(ResetResponseSchema)` to create a new message.
 */
export declare const ResetResponseSchema: GenMessage<ResetResponse>;
/**
 * @generated from message llmctl.v1.AcquireRequest
 */
export type AcquireRequest = Message<"llmctl.v1.AcquireRequest"> & {
    /**
     * The quota's name, a path like "openai/gpt-5.5": at most 256 bytes of visible characters,
     * segments separated by single '/'. Every configured ancestor is charged too. Ignored when
     * route_group is set; required otherwise.
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * Units of each dimension to reserve. requests defaults to 1 when 0.
     * Each of requests, input_tokens and output_tokens is 0 to 1,000,000,000.
     *
     * @generated from field: int64 requests = 2;
     */
    requests: bigint;
    /**
     * Estimated input tokens (cached ones included), reserved until the Report settles them.
     *
     * @generated from field: int64 input_tokens = 3;
     */
    inputTokens: bigint;
    /**
     * The caller's max_tokens: what the output may use at most.
     * Reserved in full; a Report with usage refunds what went unused, unless the key counts
     * output as reserved (KeyStatus.output_counted_as).
     *
     * @generated from field: int64 output_tokens = 4;
     */
    outputTokens: bigint;
    /**
     * Higher is served first; equal priorities are served in arrival order.
     * Default 0; negative priorities wait behind it.
     *
     * @generated from field: int32 priority = 5;
     */
    priority: number;
    /**
     * How long the daemon may hold the call waiting for capacity; 0 answers at once.
     * In ms, 0 to 3,600,000 (one hour); negative or more is INVALID_ARGUMENT. Python's client
     * defaults to an hour; the wire's default, 0, does not wait at all.
     *
     * @generated from field: int64 max_wait_ms = 6;
     */
    maxWaitMs: bigint;
    /**
     * Ties the lease's concurrency slot to an open Session with the same client_id (at most 256
     * bytes). Empty, or with no Session open, the slot is held until the lease is reported or
     * its lease TTL ends; tokens are held that long in any case.
     *
     * @generated from field: string client_id = 7;
     */
    clientId: string;
    /**
     * The run (an agent's task) the call belongs to, at most 256 bytes; empty: none. Created on
     * first use with the daemon's default budget; past its budget the answer is RUN_BUDGET.
     *
     * @generated from field: string run_id = 8;
     */
    runId: string;
    /**
     * Grants the first key of the group that can serve within max_wait.
     * A group configured in the daemon (INVALID_ARGUMENT otherwise); at most 256 bytes. Not set,
     * or set empty: none, key is acquired.
     *
     * @generated from field: optional string route_group = 9;
     */
    routeGroup?: string | undefined;
    /**
     * The retry profile for this lease's advice (interactive, batch, or a configured one); not
     * set (or empty): the key's profile, else the daemon's default_profile (batch unless
     * configured).
     *
     * @generated from field: optional string profile = 10;
     */
    profile?: string | undefined;
    /**
     * Whether the request names its output bound (max_tokens, max_completion_tokens,
     * max_output_tokens): then output_tokens is that bound, reserved in full and, on a key that
     * counts output as reserved, charged at it. False: nothing bounds the output (the default of
     * most frameworks); the daemon reserves the key's learned output estimate (a high percentile
     * of the output recently settled on the key; output_tokens until any answer came) and settles
     * at what was produced. Unset (older clients): as true.
     *
     * @generated from field: optional bool output_tokens_declared = 11;
     */
    outputTokensDeclared?: boolean | undefined;
    /**
     * A caller-chosen id for this call, at most 64 bytes of visible characters (empty: none):
     * Withdraw names it when the caller gives up while the call waits. A caller that gives up
     * keeps the call open until it answers (at once, once withdrawn) and withdraws any grant
     * it brings by its lease_id: so no grant is lost in flight to a caller already gone.
     *
     * @generated from field: string acquire_id = 12;
     */
    acquireId: string;
};
/**
 * Describes the message llmctl.v1.AcquireRequest.
 * Use `create(AcquireRequestSchema)` to create a new message.
 */
export declare const AcquireRequestSchema: GenMessage<AcquireRequest>;
/**
 * @generated from message llmctl.v1.AcquireResponse
 */
export type AcquireResponse = Message<"llmctl.v1.AcquireResponse"> & {
    /**
     * True when the lease is held: call the provider, then Report.
     *
     * @generated from field: bool granted = 1;
     */
    granted: boolean;
    /**
     * The lease to Report, 32 hex characters; empty when not granted.
     *
     * @generated from field: string lease_id = 2;
     */
    leaseId: string;
    /**
     * The key granted (the one asked for, or the member of the route group).
     * When not granted: the key refused, empty for a route group that found none.
     *
     * @generated from field: string key = 3;
     */
    key: string;
    /**
     * How long the call waited in the daemon's queue, in ms (0 when answered at once).
     *
     * @generated from field: int64 waited_ms = 4;
     */
    waitedMs: bigint;
    /**
     * When not granted: the earliest time (Unix ms) a retry may succeed; 0 if unknown.
     *
     * @generated from field: int64 not_before_unix_ms = 5;
     */
    notBeforeUnixMs: bigint;
    /**
     * When not granted: why, in words for a person (its wording may change; match on reason_code).
     *
     * @generated from field: string reason = 6;
     */
    reason: string;
    /**
     * When the lease's reservation lapses if not reported (Unix ms).
     * lease_ttl after the grant (10 minutes by default); then it is settled at its estimate and
     * a Report on it is NOT_FOUND. 0 when not granted.
     *
     * @generated from field: int64 expires_unix_ms = 7;
     */
    expiresUnixMs: bigint;
    /**
     * When not granted: why, for a program. UNSPECIFIED when granted.
     *
     * @generated from field: llmctl.v1.RefusalReason reason_code = 8;
     */
    reasonCode: RefusalReason;
};
/**
 * Describes the message llmctl.v1.AcquireResponse.
 * Use `create(AcquireResponseSchema)` to create a new message.
 */
export declare const AcquireResponseSchema: GenMessage<AcquireResponse>;
/**
 * @generated from message llmctl.v1.ReportRequest
 */
export type ReportRequest = Message<"llmctl.v1.ReportRequest"> & {
    /**
     * The lease_id of a granted Acquire. A lease is settled once: reported again, or after its
     * expiry, it is NOT_FOUND. Only the user (uid) that acquired it may report it.
     *
     * @generated from field: string lease_id = 1;
     */
    leaseId: string;
    /**
     * HTTP status of the provider's answer; 0 when none came (timeout, connection error).
     * Otherwise 100 to 999.
     *
     * @generated from field: int32 status_code = 2;
     */
    statusCode: number;
    /**
     * Response headers (names case-insensitive).
     * At most 64, each name plus value at most 4096 bytes; only the rate-limit and retry headers
     * are read.
     *
     * @generated from field: map<string, string> headers = 3;
     */
    headers: {
        [key: string]: string;
    };
    /**
     * All input tokens, cached ones included (cached_input_tokens is the part read from cache).
     * Token counts are 0 to 1,000,000,000; without usage_known they do not settle the lease.
     *
     * @generated from field: int64 input_tokens = 4;
     */
    inputTokens: bigint;
    /**
     * The part of input_tokens read from cache; at most input_tokens.
     *
     * @generated from field: int64 cached_input_tokens = 5;
     */
    cachedInputTokens: bigint;
    /**
     * Output tokens produced.
     *
     * @generated from field: int64 output_tokens = 6;
     */
    outputTokens: bigint;
    /**
     * The provider's error type or code (rate_limit_error, insufficient_quota, overloaded_error,
     * timeout, connection, ...). At most 256 bytes; empty on success. With status 0, "unknown"
     * or "unreported" says the outcome is not known.
     *
     * @generated from field: string error_type = 7;
     */
    errorType: string;
    /**
     * The provider's error message, read for a retry delay; cut to 4 KiB.
     *
     * @generated from field: string error_message = 8;
     */
    errorMessage: string;
    /**
     * True when output already reached the caller (an error inside a streamed 200).
     * Such an error is never advised RETRY: a retry would not be transparent.
     *
     * @generated from field: bool stream_started = 9;
     */
    streamStarted: boolean;
    /**
     * 1 for the first attempt.
     * 0 is taken as 1; negative is INVALID_ARGUMENT. Compared with the profile's attempts.
     *
     * @generated from field: int32 attempt = 10;
     */
    attempt: number;
    /**
     * True when input_tokens/output_tokens carry the provider's usage. When false, a lease whose
     * request may have been served (a 2xx, or status 0) is settled at its estimate, and one the
     * provider refused (4xx, 5xx) gives its tokens back.
     *
     * @generated from field: bool usage_known = 11;
     */
    usageKnown: boolean;
    /**
     * When attempt 1 started (Unix ms), for the profile's total deadline; 0: when this lease
     * was granted.
     *
     * @generated from field: int64 first_attempt_unix_ms = 12;
     */
    firstAttemptUnixMs: bigint;
    /**
     * When the provider's answer (its status and headers) reached the caller, Unix ms; 0: when
     * this report came. Read as no earlier than the grant and no later than the report's
     * arrival. A window the provider keeps frees the request's place a second after it.
     *
     * @generated from field: int64 answered_unix_ms = 13;
     */
    answeredUnixMs: bigint;
};
/**
 * Describes the message llmctl.v1.ReportRequest.
 * Use `create(ReportRequestSchema)` to create a new message.
 */
export declare const ReportRequestSchema: GenMessage<ReportRequest>;
/**
 * @generated from message llmctl.v1.ReportResponse
 */
export type ReportResponse = Message<"llmctl.v1.ReportResponse"> & {
    /**
     * What to do next.
     *
     * @generated from field: llmctl.v1.Advice advice = 1;
     */
    advice: Advice;
    /**
     * With RETRY: how long to wait before acquiring again, in ms (until the key's cooldown ends
     * after a rate limit). 0 otherwise.
     *
     * @generated from field: int64 retry_after_ms = 2;
     */
    retryAfterMs: bigint;
    /**
     * With FALLBACK: the key to acquire instead. Empty otherwise.
     *
     * @generated from field: string fallback_key = 3;
     */
    fallbackKey: string;
    /**
     * Why, in words for a person; empty with DONE.
     *
     * @generated from field: string reason = 4;
     */
    reason: string;
};
/**
 * Describes the message llmctl.v1.ReportResponse.
 * Use `create(ReportResponseSchema)` to create a new message.
 */
export declare const ReportResponseSchema: GenMessage<ReportResponse>;
/**
 * @generated from message llmctl.v1.CooldownRequest
 */
export type CooldownRequest = Message<"llmctl.v1.CooldownRequest"> & {
    /**
     * The key to cool down (with every key below it); at most 256 bytes.
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * How long, in ms: 1 to 86,400,000 (24 h). A longer cooldown in force is kept.
     *
     * @generated from field: int64 duration_ms = 2;
     */
    durationMs: bigint;
    /**
     * Shown in status; cut to 512 bytes. Empty: "set by Cooldown".
     *
     * @generated from field: string reason = 3;
     */
    reason: string;
};
/**
 * Describes the message llmctl.v1.CooldownRequest.
 * Use `create(CooldownRequestSchema)` to create a new message.
 */
export declare const CooldownRequestSchema: GenMessage<CooldownRequest>;
/**
 * @generated from message llmctl.v1.CooldownResponse
 */
export type CooldownResponse = Message<"llmctl.v1.CooldownResponse"> & {
    /**
     * When the key's cooldown ends (Unix ms): the later of the one asked for and one in force.
     *
     * @generated from field: int64 until_unix_ms = 1;
     */
    untilUnixMs: bigint;
};
/**
 * Describes the message llmctl.v1.CooldownResponse.
 * Use `create(CooldownResponseSchema)` to create a new message.
 */
export declare const CooldownResponseSchema: GenMessage<CooldownResponse>;
/**
 * @generated from message llmctl.v1.StatusRequest
 */
export type StatusRequest = Message<"llmctl.v1.StatusRequest"> & {
    /**
     * Only keys starting with this (and their events); empty: every key.
     *
     * @generated from field: string key_prefix = 1;
     */
    keyPrefix: string;
};
/**
 * Describes the message llmctl.v1.StatusRequest.
 * Use `create(StatusRequestSchema)` to create a new message.
 */
export declare const StatusRequestSchema: GenMessage<StatusRequest>;
/**
 * @generated from message llmctl.v1.WatchRequest
 */
export type WatchRequest = Message<"llmctl.v1.WatchRequest"> & {
    /**
     * How often a status comes: 0 means 1000; at least 200 (smaller is raised), at most 60000.
     * In ms; negative is INVALID_ARGUMENT. A large status may come less often.
     *
     * @generated from field: int64 interval_ms = 1;
     */
    intervalMs: bigint;
    /**
     * Only keys starting with this (and their events); empty: every key.
     *
     * @generated from field: string key_prefix = 2;
     */
    keyPrefix: string;
};
/**
 * Describes the message llmctl.v1.WatchRequest.
 * Use `create(WatchRequestSchema)` to create a new message.
 */
export declare const WatchRequestSchema: GenMessage<WatchRequest>;
/**
 * @generated from message llmctl.v1.StatusResponse
 */
export type StatusResponse = Message<"llmctl.v1.StatusResponse"> & {
    /**
     * Every key the daemon knows (or those starting with key_prefix), sorted by name.
     *
     * @generated from field: repeated llmctl.v1.KeyStatus keys = 1;
     */
    keys: KeyStatus[];
    /**
     * The daemon's clock when this status was built (Unix ms).
     *
     * @generated from field: int64 now_unix_ms = 2;
     */
    nowUnixMs: bigint;
    /**
     * When the daemon started (Unix ms); the *_total counters count from then.
     *
     * @generated from field: int64 started_unix_ms = 3;
     */
    startedUnixMs: bigint;
    /**
     * Session streams open now.
     *
     * @generated from field: int64 sessions = 4;
     */
    sessions: bigint;
    /**
     * The path of the Unix socket the daemon serves.
     *
     * @generated from field: string socket = 5;
     */
    socket: string;
    /**
     * Recent events, oldest first: cooldowns set, give-ups, fallbacks, expired leases (every
     * kind is under Event.kind). At most the last 50; with a key_prefix, only events on matching
     * keys (so none of those with an empty key).
     *
     * @generated from field: repeated llmctl.v1.Event events = 6;
     */
    events: Event[];
    /**
     * Claims answered PENDING or DONE: work not done twice.
     *
     * @generated from field: int64 duplicates_suppressed = 7;
     */
    duplicatesSuppressed: bigint;
    /**
     * Every run the daemon tracks, sorted by run_id (not filtered by key_prefix).
     *
     * @generated from field: repeated llmctl.v1.RunStatus runs = 8;
     */
    runs: RunStatus[];
    /**
     * When the claim store was found to have lost records (0: never, or longer ago than
     * claim_retention). Until claim_retention after it, a Claim on a job the store does not know
     * answers DATA_LOSS unless the request sets accept_lost_history.
     *
     * @generated from field: int64 claims_lost_at_unix_ms = 9;
     */
    claimsLostAtUnixMs: bigint;
    /**
     * The state store's writes: when the last one failed or did not finish in time (0: all fine
     * since start), and why.
     *
     * @generated from field: int64 store_failing_since_unix_ms = 10;
     */
    storeFailingSinceUnixMs: bigint;
    /**
     * Why the store is failing; empty when it is not.
     *
     * @generated from field: string store_error = 11;
     */
    storeError: string;
    /**
     * Who spends the quota: each client, most tokens first.
     * Not filtered by key_prefix; a client idle for 15 minutes, holding nothing, is dropped.
     *
     * @generated from field: repeated llmctl.v1.ClientStatus clients = 12;
     */
    clients: ClientStatus[];
    /**
     * Fleet mode: this daemon shares its keys' limits with the daemons of other hosts through
     * Redis. Absent when it runs alone.
     *
     * @generated from field: llmctl.v1.FleetStatus fleet = 13;
     */
    fleet?: FleetStatus | undefined;
};
/**
 * Describes the message llmctl.v1.StatusResponse.
 * Use `create(StatusResponseSchema)` to create a new message.
 */
export declare const StatusResponseSchema: GenMessage<StatusResponse>;
/**
 * A daemon in a fleet ([fleet] in the config, or --fleet-redis).
 *
 * @generated from message llmctl.v1.FleetStatus
 */
export type FleetStatus = Message<"llmctl.v1.FleetStatus"> & {
    /**
     * This host's name in the fleet.
     *
     * @generated from field: string host = 1;
     */
    host: string;
    /**
     * The Redis the fleet shares, its password hidden.
     *
     * @generated from field: string redis = 2;
     */
    redis: string;
    /**
     * Redis answers now. False: degraded, serving from the parts held until their lease
     * lapses, then from limit / hosts of each shared key.
     *
     * @generated from field: bool connected = 3;
     */
    connected: boolean;
    /**
     * Live hosts last seen through heartbeats, this one included (0 before Redis ever
     * answered).
     *
     * @generated from field: int64 hosts = 4;
     */
    hosts: bigint;
    /**
     * Why Redis last failed; empty when it never did.
     *
     * @generated from field: string last_error = 5;
     */
    lastError: string;
    /**
     * How much of its own demand a host leases at once, in ms.
     *
     * @generated from field: int64 slice_ms = 6;
     */
    sliceMs: bigint;
    /**
     * Redis commands this daemon sent since it started.
     *
     * @generated from field: int64 redis_commands_total = 7;
     */
    redisCommandsTotal: bigint;
    /**
     * The Redis is a Redis Cluster: the keys spread over its nodes, each key's messages on its
     * sharded channel (known once Redis first answered).
     *
     * @generated from field: bool redis_cluster = 8;
     */
    redisCluster: boolean;
};
/**
 * Describes the message llmctl.v1.FleetStatus.
 * Use `create(FleetStatusSchema)` to create a new message.
 */
export declare const FleetStatusSchema: GenMessage<FleetStatus>;
/**
 * @generated from message llmctl.v1.RunStatus
 */
export type RunStatus = Message<"llmctl.v1.RunStatus"> & {
    /**
     * The run_id its Acquire calls carry.
     *
     * @generated from field: string run_id = 1;
     */
    runId: string;
    /**
     * Leases granted to the run.
     *
     * @generated from field: int64 calls = 2;
     */
    calls: bigint;
    /**
     * RETRY and FALLBACK advices on its leases.
     *
     * @generated from field: int64 retries = 3;
     */
    retries: bigint;
    /**
     * When the daemon first saw the run (its first Acquire or SetRunBudget), Unix ms.
     *
     * @generated from field: int64 started_unix_ms = 4;
     */
    startedUnixMs: bigint;
    /**
     * Time since started_unix_ms, in ms.
     *
     * @generated from field: int64 wall_ms = 5;
     */
    wallMs: bigint;
    /**
     * 0: no bound.
     *
     * @generated from field: int64 max_calls = 6;
     */
    maxCalls: bigint;
    /**
     * 0: no bound. Once the run has retried that often, its next failure is advised GIVE_UP.
     *
     * @generated from field: int64 max_retries = 7;
     */
    maxRetries: bigint;
    /**
     * 0: no bound. In ms, from started_unix_ms.
     *
     * @generated from field: int64 max_wall_time_ms = 8;
     */
    maxWallTimeMs: bigint;
    /**
     * Why the run may make no more calls; empty while within budget.
     *
     * @generated from field: string exhausted = 9;
     */
    exhausted: string;
    /**
     * What it spends, as ClientStatus does: requests granted per second over the last 10 s.
     *
     * @generated from field: double requests_per_second = 10;
     */
    requestsPerSecond: number;
    /**
     * Tokens (input plus output) reserved by its grants in the last minute.
     *
     * @generated from field: double tokens_per_minute = 11;
     */
    tokensPerMinute: number;
    /**
     * Its leases holding a concurrency slot now.
     *
     * @generated from field: int64 in_flight = 12;
     */
    inFlight: bigint;
    /**
     * Its Acquire calls waiting in the queue now.
     *
     * @generated from field: int64 queue_depth = 13;
     */
    queueDepth: bigint;
    /**
     * Provider 429s/529s reported on its leases.
     *
     * @generated from field: int64 rate_limited_total = 14;
     */
    rateLimitedTotal: bigint;
};
/**
 * Describes the message llmctl.v1.RunStatus.
 * Use `create(RunStatusSchema)` to create a new message.
 */
export declare const RunStatusSchema: GenMessage<RunStatus>;
/**
 * A client process (by the client_id its leases carry) and what it spends.
 *
 * @generated from message llmctl.v1.ClientStatus
 */
export type ClientStatus = Message<"llmctl.v1.ClientStatus"> & {
    /**
     * The client_id its Acquire calls carry.
     *
     * @generated from field: string client_id = 1;
     */
    clientId: string;
    /**
     * The process holding the client's session, when one is open (0: none).
     *
     * @generated from field: int32 pid = 2;
     */
    pid: number;
    /**
     * Its name (/proc/PID/comm); empty when not known.
     *
     * @generated from field: string process_name = 3;
     */
    processName: string;
    /**
     * The session's user id, from the socket's peer credentials; -1 when not known.
     *
     * @generated from field: int64 uid = 4;
     */
    uid: bigint;
    /**
     * That user's name from /etc/passwd; empty when not known.
     *
     * @generated from field: string user = 5;
     */
    user: string;
    /**
     * Requests granted per second over the last 10 s.
     *
     * @generated from field: double requests_per_second = 6;
     */
    requestsPerSecond: number;
    /**
     * Tokens reserved by its grants in the last minute.
     *
     * @generated from field: double tokens_per_minute = 7;
     */
    tokensPerMinute: number;
    /**
     * Its leases holding a concurrency slot now.
     *
     * @generated from field: int64 in_flight = 8;
     */
    inFlight: bigint;
    /**
     * Its Acquire calls waiting in the queue now.
     *
     * @generated from field: int64 queue_depth = 9;
     */
    queueDepth: bigint;
    /**
     * Provider 429s/529s reported on its leases.
     *
     * @generated from field: int64 rate_limited_total = 10;
     */
    rateLimitedTotal: bigint;
    /**
     * Leases granted to it.
     *
     * @generated from field: int64 granted_total = 11;
     */
    grantedTotal: bigint;
};
/**
 * Describes the message llmctl.v1.ClientStatus.
 * Use `create(ClientStatusSchema)` to create a new message.
 */
export declare const ClientStatusSchema: GenMessage<ClientStatus>;
/**
 * @generated from message llmctl.v1.SetRunBudgetRequest
 */
export type SetRunBudgetRequest = Message<"llmctl.v1.SetRunBudgetRequest"> & {
    /**
     * The run, as Acquire's run_id names it; required, at most 256 bytes.
     *
     * @generated from field: string run_id = 1;
     */
    runId: string;
    /**
     * 0: no bound.
     * Each of the three replaces the run's current bound (the daemon's default included);
     * negative is INVALID_ARGUMENT.
     *
     * @generated from field: int64 max_calls = 2;
     */
    maxCalls: bigint;
    /**
     * 0: no bound. Retries (RETRY or FALLBACK advice) the run may make.
     *
     * @generated from field: int64 max_retries = 3;
     */
    maxRetries: bigint;
    /**
     * 0: no bound. In ms, from when the daemon first saw the run.
     *
     * @generated from field: int64 max_wall_time_ms = 4;
     */
    maxWallTimeMs: bigint;
};
/**
 * Describes the message llmctl.v1.SetRunBudgetRequest.
 * Use `create(SetRunBudgetRequestSchema)` to create a new message.
 */
export declare const SetRunBudgetRequestSchema: GenMessage<SetRunBudgetRequest>;
/**
 * @generated from message llmctl.v1.SetRunBudgetResponse
 */
export type SetRunBudgetResponse = Message<"llmctl.v1.SetRunBudgetResponse"> & {};
/**
 * Describes the message llmctl.v1.SetRunBudgetResponse.
 * Use `create(SetRunBudgetResponseSchema)` to create a new message.
 */
export declare const SetRunBudgetResponseSchema: GenMessage<SetRunBudgetResponse>;
/**
 * @generated from message llmctl.v1.Event
 */
export type Event = Message<"llmctl.v1.Event"> & {
    /**
     * When it happened (Unix ms).
     *
     * @generated from field: int64 unix_ms = 1;
     */
    unixMs: bigint;
    /**
     * The key it is about; empty for events about the daemon or a client (reconfigured,
     * released).
     *
     * @generated from field: string key = 2;
     */
    key: string;
    /**
     * cooldown, give_up, fallback, expired, released, breaker, calibrated, reset or
     * reconfigured.
     *
     * @generated from field: string kind = 3;
     */
    kind: string;
    /**
     * What happened, in words for a person.
     *
     * @generated from field: string message = 4;
     */
    message: string;
    /**
     * kind as a typed value (an older daemon sends EVENT_KIND_UNSPECIFIED).
     *
     * @generated from field: llmctl.v1.EventKind kind_code = 5;
     */
    kindCode: EventKind;
};
/**
 * Describes the message llmctl.v1.Event.
 * Use `create(EventSchema)` to create a new message.
 */
export declare const EventSchema: GenMessage<Event>;
/**
 * One bucket of one dimension on one key.
 *
 * @generated from message llmctl.v1.Bucket
 */
export type Bucket = Message<"llmctl.v1.Bucket"> & {
    /**
     * requests, tokens (input plus output), input_tokens or output_tokens.
     *
     * @generated from field: string dimension = 1;
     */
    dimension: string;
    /**
     * minute or day
     *
     * @generated from field: string period = 2;
     */
    period: string;
    /**
     * Units per period.
     *
     * @generated from field: double limit = 3;
     */
    limit: number;
    /**
     * Capacity (burst).
     *
     * @generated from field: double capacity = 4;
     */
    capacity: number;
    /**
     * Current level; negative is debt.
     * In units; debt is bounded by one capacity.
     *
     * @generated from field: double level = 5;
     */
    level: number;
    /**
     * Where the (effective) limit came from: config, headers or aimd. `limit` and `capacity`
     * are the effective ones: the lowest of the configured and learned values.
     *
     * @generated from field: string source = 6;
     */
    source: string;
    /**
     * Where the effective capacity came from: config, headers or aimd.
     *
     * @generated from field: string capacity_source = 7;
     */
    capacitySource: string;
    /**
     * The configured limit and capacity, an upper bound on anything learned; 0 when the
     * dimension was not configured.
     *
     * @generated from field: double configured_limit = 8;
     */
    configuredLimit: number;
    /**
     * The configured capacity; 0 when the dimension was not configured.
     *
     * @generated from field: double configured_capacity = 9;
     */
    configuredCapacity: number;
    /**
     * What was learned: the lower of what the provider's headers say and what probing found
     * (0 when nothing was), and which of the two (headers or aimd; empty when none).
     *
     * @generated from field: double learned_limit = 10;
     */
    learnedLimit: number;
    /**
     * Capacity inferred from the headers' remaining and reset; 0 when not known.
     *
     * @generated from field: double learned_capacity = 11;
     */
    learnedCapacity: number;
    /**
     * Where learned_limit came from: headers or aimd; empty when nothing was learned.
     *
     * @generated from field: string learned_source = 12;
     */
    learnedSource: string;
    /**
     * dimension as a typed value.
     *
     * @generated from field: llmctl.v1.Dimension dimension_code = 13;
     */
    dimensionCode: Dimension;
    /**
     * period as a typed value.
     *
     * @generated from field: llmctl.v1.Period period_code = 14;
     */
    periodCode: Period;
    /**
     * source as a typed value.
     *
     * @generated from field: llmctl.v1.LimitSource source_code = 15;
     */
    sourceCode: LimitSource;
    /**
     * capacity_source as a typed value.
     *
     * @generated from field: llmctl.v1.LimitSource capacity_source_code = 16;
     */
    capacitySourceCode: LimitSource;
    /**
     * learned_source as a typed value; UNSPECIFIED when nothing was learned. (An older daemon
     * sends every *_code UNSPECIFIED.)
     *
     * @generated from field: llmctl.v1.LimitSource learned_source_code = 17;
     */
    learnedSourceCode: LimitSource;
    /**
     * The limit the provider's headers name, whatever is enforced; 0 when they named none.
     *
     * @generated from field: double headers_limit = 18;
     */
    headersLimit: number;
    /**
     * Probing found a limit beneath the headers' limit: refusals the headers did not predict
     * (they said there was room) came from something in between (a gateway, nginx), learned as
     * a limit of its own (source aimd); the stricter is enforced.
     *
     * @generated from field: bool beneath_headers = 19;
     */
    beneathHeaders: boolean;
};
/**
 * Describes the message llmctl.v1.Bucket.
 * Use `create(BucketSchema)` to create a new message.
 */
export declare const BucketSchema: GenMessage<Bucket>;
/**
 * @generated from message llmctl.v1.KeyStatus
 */
export type KeyStatus = Message<"llmctl.v1.KeyStatus"> & {
    /**
     * The key's name.
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * The key's own limited buckets (its ancestors' are under their own names).
     *
     * @generated from field: repeated llmctl.v1.Bucket buckets = 2;
     */
    buckets: Bucket[];
    /**
     * Leases holding a concurrency slot on this key, its descendants' included.
     *
     * @generated from field: int64 in_flight = 3;
     */
    inFlight: bigint;
    /**
     * 0 when unlimited.
     *
     * @generated from field: int64 max_concurrency = 4;
     */
    maxConcurrency: bigint;
    /**
     * Acquire calls on this key waiting in the queue now.
     *
     * @generated from field: int64 queue_depth = 5;
     */
    queueDepth: bigint;
    /**
     * Queue wait of the last 256 grants on this key, in ms (0 for a grant at once).
     *
     * @generated from field: int64 queue_wait_p50_ms = 6;
     */
    queueWaitP50Ms: bigint;
    /**
     * The 95th percentile of the same.
     *
     * @generated from field: int64 queue_wait_p95_ms = 7;
     */
    queueWaitP95Ms: bigint;
    /**
     * 429/529 reports on this key. Every *_total counts since the daemon started.
     *
     * @generated from field: int64 rate_limited_total = 8;
     */
    rateLimitedTotal: bigint;
    /**
     * 429/529 reports in the last minute.
     *
     * @generated from field: double rate_limited_per_minute = 9;
     */
    rateLimitedPerMinute: number;
    /**
     * Tokens (input plus output) reserved by grants on this key.
     *
     * @generated from field: int64 tokens_reserved = 10;
     */
    tokensReserved: bigint;
    /**
     * Tokens settled as used: the usage reported, or the estimate of a lease settled at it.
     *
     * @generated from field: int64 tokens_used = 11;
     */
    tokensUsed: bigint;
    /**
     * Time left of the longest cooldown on this key or an ancestor, in ms; 0 when none.
     *
     * @generated from field: int64 cooldown_remaining_ms = 12;
     */
    cooldownRemainingMs: bigint;
    /**
     * FALLBACK advices on leases of this key.
     *
     * @generated from field: int64 fallbacks_total = 13;
     */
    fallbacksTotal: bigint;
    /**
     * Acquire calls that reached this key (route group members tried included).
     *
     * @generated from field: int64 requests_total = 14;
     */
    requestsTotal: bigint;
    /**
     * Leases granted on this key.
     *
     * @generated from field: int64 granted_total = 15;
     */
    grantedTotal: bigint;
    /**
     * Why that cooldown was set; empty when none.
     *
     * @generated from field: string cooldown_reason = 16;
     */
    cooldownReason: string;
    /**
     * Tokens reserved by leases not yet settled.
     *
     * @generated from field: int64 tokens_outstanding = 17;
     */
    tokensOutstanding: bigint;
    /**
     * The ancestors with limits that every grant on this key is charged to, nearest first.
     *
     * @generated from field: repeated string ancestors = 18;
     */
    ancestors: string[];
    /**
     * The rate-limit and retry headers of the last report that had any (names lower case, at
     * most 32, values cut to 64 characters).
     *
     * @generated from field: map<string, string> last_headers = 19;
     */
    lastHeaders: {
        [key: string]: string;
    };
    /**
     * Grants per second over the last 10 s.
     *
     * @generated from field: double requests_per_second = 20;
     */
    requestsPerSecond: number;
    /**
     * Acquire calls on this key not granted (capacity, concurrency, cooldown or breaker).
     *
     * @generated from field: int64 rejected_total = 21;
     */
    rejectedTotal: bigint;
    /**
     * FALLBACK advices in the last minute.
     *
     * @generated from field: double fallbacks_per_minute = 22;
     */
    fallbacksPerMinute: number;
    /**
     * RETRY advices on leases of this key.
     *
     * @generated from field: int64 retries_total = 23;
     */
    retriesTotal: bigint;
    /**
     * GIVE_UP advices on leases of this key.
     *
     * @generated from field: int64 give_ups_total = 24;
     */
    giveUpsTotal: bigint;
    /**
     * closed, open or half_open
     *
     * @generated from field: string breaker = 25;
     */
    breaker: string;
    /**
     * Time until the open breaker lets a probe through, in ms; 0 when it is not open.
     *
     * @generated from field: int64 breaker_open_remaining_ms = 26;
     */
    breakerOpenRemainingMs: bigint;
    /**
     * The key's provider preset (openai, azure, anthropic, gemini, generic); empty when none.
     *
     * @generated from field: string provider = 27;
     */
    provider: string;
    /**
     * How output tokens are charged: actual or reserved.
     *
     * @generated from field: string output_counted_as = 28;
     */
    outputCountedAs: string;
    /**
     * What decided it: config, provider (the preset), usage (how its remaining-tokens header
     * moves against the usage reported), headers (the family of limit headers its responses
     * carry) or default.
     *
     * @generated from field: string output_counted_as_source = 29;
     */
    outputCountedAsSource: string;
    /**
     * Limit header values ignored as absurd (a limit of 0, a reset of years, a remaining
     * above its limit).
     *
     * @generated from field: int64 headers_ignored_total = 30;
     */
    headersIgnoredTotal: bigint;
    /**
     * True when a fleet shares this key (fleet mode on, and not `fleet = false`).
     *
     * @generated from field: bool fleet_shared = 31;
     */
    fleetShared: boolean;
    /**
     * This host's share of every limit and burst of a shared key, 0 to 1 (the buckets' capacity
     * and level are this host's part); 1 when not shared.
     *
     * @generated from field: double fleet_share = 32;
     */
    fleetShare: number;
    /**
     * The concurrency slots this host holds of max_concurrency; -1 when the fleet does not
     * bound it.
     *
     * @generated from field: int64 fleet_slots = 33;
     */
    fleetSlots: bigint;
    /**
     * The output tokens a request that declares no max_tokens reserves on this key now: a high
     * percentile of the output recently settled on it; 0 before any answer (the request's own
     * output_tokens is reserved then).
     *
     * @generated from field: int64 output_tokens_estimate = 34;
     */
    outputTokensEstimate: bigint;
    /**
     * Of tokens_reserved and tokens_used: what requests that declared no output reserved with
     * the learned estimate (output_tokens_estimate), and what they were settled at; their ratio
     * says how well the estimate fits. Those that reserved the caller's default before any
     * answer came are not counted here.
     *
     * @generated from field: int64 undeclared_tokens_reserved = 35;
     */
    undeclaredTokensReserved: bigint;
    /**
     * What those requests were settled at (the usage reported).
     *
     * @generated from field: int64 undeclared_tokens_used = 36;
     */
    undeclaredTokensUsed: bigint;
    /**
     * Where max_concurrency came from: config, aimd (learned from refusals of requests in
     * flight), or empty when unlimited.
     *
     * @generated from field: string concurrency_source = 37;
     */
    concurrencySource: string;
    /**
     * The concurrency learned from refusals (0 when none was): the effective max_concurrency is
     * the lower of it and the configured one.
     *
     * @generated from field: int64 learned_concurrency = 38;
     */
    learnedConcurrency: bigint;
    /**
     * When the daily quota the provider said is spent resets (Unix ms); 0 when none is.
     *
     * @generated from field: int64 daily_quota_until_unix_ms = 39;
     */
    dailyQuotaUntilUnixMs: bigint;
    /**
     * Which limit that is, in words (such as "requests per day"); empty when none.
     *
     * @generated from field: string daily_quota = 40;
     */
    dailyQuota: string;
    /**
     * Set when the key's requests bucket follows a provider's fixed windows: the window's
     * length in ms (0 when its refill is continuous).
     *
     * @generated from field: int64 fixed_window_ms = 41;
     */
    fixedWindowMs: bigint;
    /**
     * breaker as a typed value.
     *
     * @generated from field: llmctl.v1.BreakerState breaker_code = 42;
     */
    breakerCode: BreakerState;
    /**
     * provider as a typed value; UNSPECIFIED when none.
     *
     * @generated from field: llmctl.v1.Provider provider_code = 43;
     */
    providerCode: Provider;
    /**
     * output_counted_as as a typed value.
     *
     * @generated from field: llmctl.v1.OutputCounting output_counted_as_code = 44;
     */
    outputCountedAsCode: OutputCounting;
    /**
     * output_counted_as_source as a typed value.
     *
     * @generated from field: llmctl.v1.AccountingSource output_counted_as_source_code = 45;
     */
    outputCountedAsSourceCode: AccountingSource;
    /**
     * concurrency_source as a typed value; UNSPECIFIED when unlimited.
     *
     * @generated from field: llmctl.v1.LimitSource concurrency_source_code = 46;
     */
    concurrencySourceCode: LimitSource;
    /**
     * Answers served (2xx) that were reported without their usage and so settled at the
     * estimate (a stream whose upstream sends no usage: one that refuses to be asked for it).
     *
     * @generated from field: int64 settled_at_estimate_total = 47;
     */
    settledAtEstimateTotal: bigint;
    /**
     * The plan's windows (a subscription's 5-hour and 7-day windows) as this key's answers told
     * them (Anthropic's anthropic-ratelimit-unified-*, Codex's x-codex-primary-* / -secondary-*).
     *
     * @generated from field: repeated llmctl.v1.PlanWindow plan_windows = 48;
     */
    planWindows: PlanWindow[];
    /**
     * True when the fleet is crowded on this key: it holds no share of the limits but the units
     * its line in Redis gives it as its requests wait (fleet_share is 0 then, or, while Redis
     * does not answer, limit / N in whole units).
     *
     * @generated from field: bool fleet_line = 49;
     */
    fleetLine: boolean;
    /**
     * Requests their callers abandoned: waits withdrawn (or whose call went away), grants given
     * back unsent, and requests reported cancelled after they were sent (a closed connection at
     * the proxy, a cancelled task or future, an aborted promise). Never counted as refusals.
     *
     * @generated from field: int64 cancelled_total = 50;
     */
    cancelledTotal: bigint;
    /**
     * The ledger of this key's leases: every lease granted (granted_total) ends reported
     * (settled_total), given back unsent (withdrawn_total) or at its TTL (expired_total), or is
     * still outstanding.
     *
     * @generated from field: int64 settled_total = 51;
     */
    settledTotal: bigint;
    /**
     * Leases given back unsent (Withdraw by lease_id, or a grant whose caller had gone).
     *
     * @generated from field: int64 withdrawn_total = 52;
     */
    withdrawnTotal: bigint;
    /**
     * Leases settled at their estimate when their TTL ran out (never reported).
     *
     * @generated from field: int64 expired_total = 53;
     */
    expiredTotal: bigint;
};
/**
 * Describes the message llmctl.v1.KeyStatus.
 * Use `create(KeyStatusSchema)` to create a new message.
 */
export declare const KeyStatusSchema: GenMessage<KeyStatus>;
/**
 * One window of a subscription plan.
 *
 * @generated from message llmctl.v1.PlanWindow
 */
export type PlanWindow = Message<"llmctl.v1.PlanWindow"> & {
    /**
     * 5h, 7d, 7d_opus, ...: the provider's own name, or Codex's named by its length.
     *
     * @generated from field: string name = 1;
     */
    name: string;
    /**
     * In words: "5-hour window".
     *
     * @generated from field: string label = 2;
     */
    label: string;
    /**
     * The share used, 0 to 1; -1 when not stated.
     *
     * @generated from field: double used = 3;
     */
    used: number;
    /**
     * When it resets (Unix ms); 0 when not stated.
     *
     * @generated from field: int64 resets_at_unix_ms = 4;
     */
    resetsAtUnixMs: bigint;
    /**
     * Its length in minutes; 0 when not stated.
     *
     * @generated from field: int64 window_minutes = 5;
     */
    windowMinutes: bigint;
    /**
     * The provider's status of it (allowed, allowed_warning, rejected); empty when not stated.
     *
     * @generated from field: string status = 6;
     */
    status: string;
    /**
     * True while it is closed: every Acquire under the account is refused (PLAN_WINDOW) until
     * resets_at_unix_ms.
     *
     * @generated from field: bool closed = 7;
     */
    closed: boolean;
    /**
     * True when the provider says it is the window that binds.
     *
     * @generated from field: bool binding = 8;
     */
    binding: boolean;
};
/**
 * Describes the message llmctl.v1.PlanWindow.
 * Use `create(PlanWindowSchema)` to create a new message.
 */
export declare const PlanWindowSchema: GenMessage<PlanWindow>;
/**
 * @generated from message llmctl.v1.ClaimRequest
 */
export type ClaimRequest = Message<"llmctl.v1.ClaimRequest"> & {
    /**
     * The job's id (a job id or a hash of the request): required, at most 1024 bytes of visible
     * characters.
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * How long the work may take, in ms: 1 to 604,800,000 (7 days). Past it, uncompleted, the
     * job may be claimed again.
     *
     * @generated from field: int64 ttl_ms = 2;
     */
    ttlMs: bigint;
    /**
     * After the store lost records (StatusResponse.claims_lost_at_unix_ms), a job it does not
     * know may have been done before the loss: the Claim answers DATA_LOSS unless this is set,
     * saying "do it again if it is not known".
     *
     * @generated from field: bool accept_lost_history = 3;
     */
    acceptLostHistory: boolean;
};
/**
 * Describes the message llmctl.v1.ClaimRequest.
 * Use `create(ClaimRequestSchema)` to create a new message.
 */
export declare const ClaimRequestSchema: GenMessage<ClaimRequest>;
/**
 * @generated from message llmctl.v1.ClaimResponse
 */
export type ClaimResponse = Message<"llmctl.v1.ClaimResponse"> & {
    /**
     * CLAIMED, PENDING or DONE.
     *
     * @generated from field: llmctl.v1.ClaimResponse.State state = 1;
     */
    state: ClaimResponse_State;
    /**
     * With DONE: the result the Complete stored (kept for claim_retention after it, 7 days by
     * default). Empty otherwise.
     *
     * @generated from field: bytes result = 2;
     */
    result: Uint8Array;
    /**
     * With CLAIMED: now; with PENDING: when the holder claimed it (Unix ms). 0 with DONE.
     *
     * @generated from field: int64 since_unix_ms = 3;
     */
    sinceUnixMs: bigint;
};
/**
 * Describes the message llmctl.v1.ClaimResponse.
 * Use `create(ClaimResponseSchema)` to create a new message.
 */
export declare const ClaimResponseSchema: GenMessage<ClaimResponse>;
/**
 * What a Claim found.
 *
 * @generated from enum llmctl.v1.ClaimResponse.State
 */
export declare enum ClaimResponse_State {
    /**
     * Never sent by the daemon.
     *
     * @generated from enum value: STATE_UNSPECIFIED = 0;
     */
    STATE_UNSPECIFIED = 0,
    /**
     * The claim is yours: do the work, then Complete.
     *
     * @generated from enum value: CLAIMED = 1;
     */
    CLAIMED = 1,
    /**
     * Someone else holds it (since since_unix_ms).
     *
     * @generated from enum value: PENDING = 2;
     */
    PENDING = 2,
    /**
     * Already done: result holds what was stored.
     *
     * @generated from enum value: DONE = 3;
     */
    DONE = 3
}
/**
 * Describes the enum llmctl.v1.ClaimResponse.State.
 */
export declare const ClaimResponse_StateSchema: GenEnum<ClaimResponse_State>;
/**
 * @generated from message llmctl.v1.CompleteRequest
 */
export type CompleteRequest = Message<"llmctl.v1.CompleteRequest"> & {
    /**
     * The key of a claim held by the same user (FAILED_PRECONDITION when there is none).
     *
     * @generated from field: string key = 1;
     */
    key: string;
    /**
     * What later Claims of the key get back: at most max_claim_result bytes (1 MiB by default).
     * The same result again is accepted; a different one for a done job is FAILED_PRECONDITION.
     *
     * @generated from field: bytes result = 2;
     */
    result: Uint8Array;
};
/**
 * Describes the message llmctl.v1.CompleteRequest.
 * Use `create(CompleteRequestSchema)` to create a new message.
 */
export declare const CompleteRequestSchema: GenMessage<CompleteRequest>;
/**
 * @generated from message llmctl.v1.CompleteResponse
 */
export type CompleteResponse = Message<"llmctl.v1.CompleteResponse"> & {};
/**
 * Describes the message llmctl.v1.CompleteResponse.
 * Use `create(CompleteResponseSchema)` to create a new message.
 */
export declare const CompleteResponseSchema: GenMessage<CompleteResponse>;
/**
 * @generated from message llmctl.v1.SessionRequest
 */
export type SessionRequest = Message<"llmctl.v1.SessionRequest"> & {
    /**
     * The id this process passes as client_id on Acquire: required, at most 256 bytes. Several
     * sessions may share it; its slots are released when the last one ends.
     *
     * @generated from field: string client_id = 1;
     */
    clientId: string;
    /**
     * The client's process id, used when the socket's peer credentials do not say; 0: not given.
     *
     * @generated from field: int32 pid = 2;
     */
    pid: number;
};
/**
 * Describes the message llmctl.v1.SessionRequest.
 * Use `create(SessionRequestSchema)` to create a new message.
 */
export declare const SessionRequestSchema: GenMessage<SessionRequest>;
/**
 * @generated from message llmctl.v1.SessionEvent
 */
export type SessionEvent = Message<"llmctl.v1.SessionEvent"> & {
    /**
     * The session's client_id, sent once when it opens; nothing else comes until it ends.
     *
     * @generated from field: string client_id = 1;
     */
    clientId: string;
};
/**
 * Describes the message llmctl.v1.SessionEvent.
 * Use `create(SessionEventSchema)` to create a new message.
 */
export declare const SessionEventSchema: GenMessage<SessionEvent>;
/**
 * @generated from message llmctl.v1.PingRequest
 */
export type PingRequest = Message<"llmctl.v1.PingRequest"> & {};
/**
 * Describes the message llmctl.v1.PingRequest.
 * Use `create(PingRequestSchema)` to create a new message.
 */
export declare const PingRequestSchema: GenMessage<PingRequest>;
/**
 * @generated from message llmctl.v1.PingResponse
 */
export type PingResponse = Message<"llmctl.v1.PingResponse"> & {};
/**
 * Describes the message llmctl.v1.PingResponse.
 * Use `create(PingResponseSchema)` to create a new message.
 */
export declare const PingResponseSchema: GenMessage<PingResponse>;
/**
 * Why an Acquire was not granted.
 *
 * @generated from enum llmctl.v1.RefusalReason
 */
export declare enum RefusalReason {
    /**
     * Granted, or a daemon too old to say.
     *
     * @generated from enum value: REFUSAL_REASON_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * The key's buckets will not hold enough within max_wait; not_before says when they will.
     *
     * @generated from enum value: REFUSAL_REASON_CAPACITY = 1;
     */
    CAPACITY = 1,
    /**
     * No concurrency slot (or a probe is in flight) within max_wait; not_before is 0.
     *
     * @generated from enum value: REFUSAL_REASON_CONCURRENCY = 2;
     */
    CONCURRENCY = 2,
    /**
     * The key (or an ancestor) is cooling down after a rate limit or a Cooldown call.
     * not_before is when the cooldown ends.
     *
     * @generated from enum value: REFUSAL_REASON_COOLDOWN = 3;
     */
    COOLDOWN = 3,
    /**
     * The key's circuit breaker is open after repeated failures.
     * not_before is when it lets a probe through.
     *
     * @generated from enum value: REFUSAL_REASON_BREAKER_OPEN = 4;
     */
    BREAKER_OPEN = 4,
    /**
     * The run's budget (max_calls, max_retries, max_wall_time) is spent: asking again will not help.
     *
     * @generated from enum value: REFUSAL_REASON_RUN_BUDGET = 5;
     */
    RUN_BUDGET = 5,
    /**
     * No key of the route group could serve within max_wait.
     * not_before is the earliest a member may serve; 0 if unknown.
     *
     * @generated from enum value: REFUSAL_REASON_ROUTE_GROUP = 6;
     */
    ROUTE_GROUP = 6,
    /**
     * The daemon is stopping; ask again when it is back.
     * Answers a queued call; a call that arrives while it stops fails with UNAVAILABLE.
     *
     * @generated from enum value: REFUSAL_REASON_STOPPING = 7;
     */
    STOPPING = 7,
    /**
     * The request became larger than the key's buckets can ever hold while it waited (a limit
     * learned from headers, or reloaded, shrank below it); asking again with the same size will
     * not help. not_before is 0.
     *
     * @generated from enum value: REFUSAL_REASON_TOO_LARGE = 8;
     */
    TOO_LARGE = 8,
    /**
     * The key's daily quota (requests or tokens per day) is spent: the provider refused it and
     * said so. not_before is when it resets; asking again before then will not help.
     *
     * @generated from enum value: REFUSAL_REASON_DAILY_QUOTA = 9;
     */
    DAILY_QUOTA = 9,
    /**
     * A plan window (the 5-hour or 7-day window of a subscription) of the key's account is
     * closed: the provider refused it and said so. not_before is when it resets; asking again
     * before then will not help.
     *
     * @generated from enum value: REFUSAL_REASON_PLAN_WINDOW = 10;
     */
    PLAN_WINDOW = 10,
    /**
     * The caller withdrew the call (Withdraw) before it was granted.
     *
     * @generated from enum value: REFUSAL_REASON_CANCELLED = 11;
     */
    CANCELLED = 11
}
/**
 * Describes the enum llmctl.v1.RefusalReason.
 */
export declare const RefusalReasonSchema: GenEnum<RefusalReason>;
/**
 * What the caller should do after a Report.
 *
 * @generated from enum llmctl.v1.Advice
 */
export declare enum Advice {
    /**
     * Never sent by the daemon.
     *
     * @generated from enum value: ADVICE_UNSPECIFIED = 0;
     */
    ADVICE_UNSPECIFIED = 0,
    /**
     * The call succeeded: nothing more to do.
     *
     * @generated from enum value: DONE = 1;
     */
    DONE = 1,
    /**
     * Wait retry_after_ms, then Acquire a new lease and try again, reporting attempt + 1.
     *
     * @generated from enum value: RETRY = 2;
     */
    RETRY = 2,
    /**
     * Do not retry: retrying will not help, or the profile's attempts, deadline or the run's
     * budget are spent. reason says which.
     *
     * @generated from enum value: GIVE_UP = 3;
     */
    GIVE_UP = 3,
    /**
     * Do not retry here: Acquire fallback_key instead (a member of the lease's route group).
     *
     * @generated from enum value: FALLBACK = 4;
     */
    FALLBACK = 4
}
/**
 * Describes the enum llmctl.v1.Advice.
 */
export declare const AdviceSchema: GenEnum<Advice>;
/**
 * What an event is about (Event.kind_code; Event.kind is its name).
 *
 * @generated from enum llmctl.v1.EventKind
 */
export declare enum EventKind {
    /**
     * Not sent: an older daemon (read Event.kind then).
     *
     * @generated from enum value: EVENT_KIND_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * A cooldown was installed.
     *
     * @generated from enum value: EVENT_KIND_COOLDOWN = 1;
     */
    COOLDOWN = 1,
    /**
     * A GIVE_UP advice.
     *
     * @generated from enum value: EVENT_KIND_GIVE_UP = 2;
     */
    GIVE_UP = 2,
    /**
     * A FALLBACK advice.
     *
     * @generated from enum value: EVENT_KIND_FALLBACK = 3;
     */
    FALLBACK = 3,
    /**
     * A circuit breaker opened or closed.
     *
     * @generated from enum value: EVENT_KIND_BREAKER = 4;
     */
    BREAKER = 4,
    /**
     * A lease lapsed unreported.
     *
     * @generated from enum value: EVENT_KIND_EXPIRED = 5;
     */
    EXPIRED = 5,
    /**
     * A client's leases were released (its session ended).
     *
     * @generated from enum value: EVENT_KIND_RELEASED = 6;
     */
    RELEASED = 6,
    /**
     * A limit was learned or lowered.
     *
     * @generated from enum value: EVENT_KIND_CALIBRATED = 7;
     */
    CALIBRATED = 7,
    /**
     * State was reset (llmctl reset).
     *
     * @generated from enum value: EVENT_KIND_RESET = 8;
     */
    RESET = 8,
    /**
     * The config was reloaded.
     *
     * @generated from enum value: EVENT_KIND_RECONFIGURED = 9;
     */
    RECONFIGURED = 9,
    /**
     * A plan window passed its warn_at share.
     *
     * @generated from enum value: EVENT_KIND_PLAN_WINDOW = 10;
     */
    PLAN_WINDOW = 10
}
/**
 * Describes the enum llmctl.v1.EventKind.
 */
export declare const EventKindSchema: GenEnum<EventKind>;
/**
 * A bucket's dimension (Bucket.dimension_code; Bucket.dimension is its name).
 *
 * @generated from enum llmctl.v1.Dimension
 */
export declare enum Dimension {
    /**
     * Not sent: an older daemon (read Bucket.dimension then).
     *
     * @generated from enum value: DIMENSION_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Requests.
     *
     * @generated from enum value: DIMENSION_REQUESTS = 1;
     */
    REQUESTS = 1,
    /**
     * Input plus output tokens.
     *
     * @generated from enum value: DIMENSION_TOKENS = 2;
     */
    TOKENS = 2,
    /**
     * Input tokens.
     *
     * @generated from enum value: DIMENSION_INPUT_TOKENS = 3;
     */
    INPUT_TOKENS = 3,
    /**
     * Output tokens.
     *
     * @generated from enum value: DIMENSION_OUTPUT_TOKENS = 4;
     */
    OUTPUT_TOKENS = 4
}
/**
 * Describes the enum llmctl.v1.Dimension.
 */
export declare const DimensionSchema: GenEnum<Dimension>;
/**
 * The period a limit is per (Bucket.period_code).
 *
 * @generated from enum llmctl.v1.Period
 */
export declare enum Period {
    /**
     * Not sent by this daemon.
     *
     * @generated from enum value: PERIOD_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Per minute.
     *
     * @generated from enum value: PERIOD_MINUTE = 1;
     */
    MINUTE = 1,
    /**
     * Per day.
     *
     * @generated from enum value: PERIOD_DAY = 2;
     */
    DAY = 2
}
/**
 * Describes the enum llmctl.v1.Period.
 */
export declare const PeriodSchema: GenEnum<Period>;
/**
 * Where a limit came from (Bucket.source_code, capacity_source_code, learned_source_code,
 * KeyStatus.concurrency_source_code).
 *
 * @generated from enum llmctl.v1.LimitSource
 */
export declare enum LimitSource {
    /**
     * None (learned_source_code when nothing was learned, concurrency_source_code when
     * unlimited), or not sent by this daemon.
     *
     * @generated from enum value: LIMIT_SOURCE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * The config.
     *
     * @generated from enum value: LIMIT_SOURCE_CONFIG = 1;
     */
    CONFIG = 1,
    /**
     * The provider's rate-limit headers.
     *
     * @generated from enum value: LIMIT_SOURCE_HEADERS = 2;
     */
    HEADERS = 2,
    /**
     * Probing: lowered on 429s, raised while demand waits and nothing is refused.
     *
     * @generated from enum value: LIMIT_SOURCE_AIMD = 3;
     */
    AIMD = 3
}
/**
 * Describes the enum llmctl.v1.LimitSource.
 */
export declare const LimitSourceSchema: GenEnum<LimitSource>;
/**
 * A key's circuit breaker (KeyStatus.breaker_code).
 *
 * @generated from enum llmctl.v1.BreakerState
 */
export declare enum BreakerState {
    /**
     * Not sent by this daemon.
     *
     * @generated from enum value: BREAKER_STATE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Requests go.
     *
     * @generated from enum value: BREAKER_STATE_CLOSED = 1;
     */
    CLOSED = 1,
    /**
     * Requests are refused until it lets a probe through.
     *
     * @generated from enum value: BREAKER_STATE_OPEN = 2;
     */
    OPEN = 2,
    /**
     * One probe is in flight.
     *
     * @generated from enum value: BREAKER_STATE_HALF_OPEN = 3;
     */
    HALF_OPEN = 3
}
/**
 * Describes the enum llmctl.v1.BreakerState.
 */
export declare const BreakerStateSchema: GenEnum<BreakerState>;
/**
 * A key's provider preset (KeyStatus.provider_code).
 *
 * @generated from enum llmctl.v1.Provider
 */
export declare enum Provider {
    /**
     * None configured, or not sent by this daemon.
     *
     * @generated from enum value: PROVIDER_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * openai
     *
     * @generated from enum value: PROVIDER_OPENAI = 1;
     */
    OPENAI = 1,
    /**
     * azure
     *
     * @generated from enum value: PROVIDER_AZURE = 2;
     */
    AZURE = 2,
    /**
     * anthropic
     *
     * @generated from enum value: PROVIDER_ANTHROPIC = 3;
     */
    ANTHROPIC = 3,
    /**
     * gemini
     *
     * @generated from enum value: PROVIDER_GEMINI = 4;
     */
    GEMINI = 4,
    /**
     * generic
     *
     * @generated from enum value: PROVIDER_GENERIC = 5;
     */
    GENERIC = 5
}
/**
 * Describes the enum llmctl.v1.Provider.
 */
export declare const ProviderSchema: GenEnum<Provider>;
/**
 * How output tokens are charged (KeyStatus.output_counted_as_code).
 *
 * @generated from enum llmctl.v1.OutputCounting
 */
export declare enum OutputCounting {
    /**
     * Not sent by this daemon.
     *
     * @generated from enum value: OUTPUT_COUNTING_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * Tokens produced: unused max_tokens are refunded.
     *
     * @generated from enum value: OUTPUT_COUNTING_ACTUAL = 1;
     */
    ACTUAL = 1,
    /**
     * max_tokens at admission: no refund of output tokens.
     *
     * @generated from enum value: OUTPUT_COUNTING_RESERVED = 2;
     */
    RESERVED = 2
}
/**
 * Describes the enum llmctl.v1.OutputCounting.
 */
export declare const OutputCountingSchema: GenEnum<OutputCounting>;
/**
 * What decided how output is counted (KeyStatus.output_counted_as_source_code).
 *
 * @generated from enum llmctl.v1.AccountingSource
 */
export declare enum AccountingSource {
    /**
     * Not sent by this daemon.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_UNSPECIFIED = 0;
     */
    UNSPECIFIED = 0,
    /**
     * output_counted_as in the key's config.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_CONFIG = 1;
     */
    CONFIG = 1,
    /**
     * The key's provider preset.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_PROVIDER = 2;
     */
    PROVIDER = 2,
    /**
     * How its remaining-tokens header moves against the usage reported.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_USAGE = 3;
     */
    USAGE = 3,
    /**
     * The family of limit headers its responses carry.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_HEADERS = 4;
     */
    HEADERS = 4,
    /**
     * Nothing said otherwise: output as produced.
     *
     * @generated from enum value: ACCOUNTING_SOURCE_DEFAULT = 5;
     */
    DEFAULT = 5
}
/**
 * Describes the enum llmctl.v1.AccountingSource.
 */
export declare const AccountingSourceSchema: GenEnum<AccountingSource>;
/**
 * The per-host daemon, served over gRPC on a Unix socket. Errors are gRPC statuses whose message
 * names the value and the fix; a refusal to grant is an answer, not an error.
 *
 * @generated from service llmctl.v1.Limiter
 */
export declare const Limiter: GenService<{
    /**
     * Reserve capacity on a key (and its ancestors), waiting up to max_wait_ms.
     *
     * @generated from rpc llmctl.v1.Limiter.Acquire
     */
    acquire: {
        methodKind: "unary";
        input: typeof AcquireRequestSchema;
        output: typeof AcquireResponseSchema;
    };
    /**
     * Settle a lease with what actually happened; answers with retry advice.
     *
     * @generated from rpc llmctl.v1.Limiter.Report
     */
    report: {
        methodKind: "unary";
        input: typeof ReportRequestSchema;
        output: typeof ReportResponseSchema;
    };
    /**
     * Stop granting on a key (and its descendants) until a deadline; never shortens one.
     *
     * @generated from rpc llmctl.v1.Limiter.Cooldown
     */
    cooldown: {
        methodKind: "unary";
        input: typeof CooldownRequestSchema;
        output: typeof CooldownResponseSchema;
    };
    /**
     * The daemon's state now: keys, runs, clients, recent events.
     *
     * @generated from rpc llmctl.v1.Limiter.Status
     */
    status: {
        methodKind: "unary";
        input: typeof StatusRequestSchema;
        output: typeof StatusResponseSchema;
    };
    /**
     * The same as Status, every interval_ms until the caller closes the stream. A process may
     * hold 2 Watch streams and all processes together 64 (RESOURCE_EXHAUSTED past that).
     *
     * @generated from rpc llmctl.v1.Limiter.Watch
     */
    watch: {
        methodKind: "server_streaming";
        input: typeof WatchRequestSchema;
        output: typeof StatusResponseSchema;
    };
    /**
     * Take a job before doing it, so that no two processes do it (or one does it twice).
     *
     * @generated from rpc llmctl.v1.Limiter.Claim
     */
    claim: {
        methodKind: "unary";
        input: typeof ClaimRequestSchema;
        output: typeof ClaimResponseSchema;
    };
    /**
     * Record a claimed job as done, with its result for later Claims.
     *
     * @generated from rpc llmctl.v1.Limiter.Complete
     */
    complete: {
        methodKind: "unary";
        input: typeof CompleteRequestSchema;
        output: typeof CompleteResponseSchema;
    };
    /**
     * A client process keeps one Session open; when it ends (the process died or closed it),
     * the concurrency slots of every lease acquired with its client_id are released.
     *
     * @generated from rpc llmctl.v1.Limiter.Session
     */
    session: {
        methodKind: "server_streaming";
        input: typeof SessionRequestSchema;
        output: typeof SessionEventSchema;
    };
    /**
     * Does nothing: the floor under every other call's latency.
     *
     * @generated from rpc llmctl.v1.Limiter.Ping
     */
    ping: {
        methodKind: "unary";
        input: typeof PingRequestSchema;
        output: typeof PingResponseSchema;
    };
    /**
     * Sets (or replaces) the budget of one run: past it, Acquire answers not granted with
     * reason run_budget.
     *
     * @generated from rpc llmctl.v1.Limiter.SetRunBudget
     */
    setRunBudget: {
        methodKind: "unary";
        input: typeof SetRunBudgetRequestSchema;
        output: typeof SetRunBudgetResponseSchema;
    };
    /**
     * For an operator: forgets what a key learned (limits from headers and probing), its debt,
     * its cooldown and its breaker. Configured limits stay.
     *
     * @generated from rpc llmctl.v1.Limiter.Reset
     */
    reset: {
        methodKind: "unary";
        input: typeof ResetRequestSchema;
        output: typeof ResetResponseSchema;
    };
    /**
     * For a caller that gave up: takes its Acquire out of the queue (by acquire_id), or gives
     * back a lease whose request was never sent (by lease_id). Nothing it withdraws is counted
     * against a limit, a breaker or a learned rate; the key counts it cancelled.
     *
     * @generated from rpc llmctl.v1.Limiter.Withdraw
     */
    withdraw: {
        methodKind: "unary";
        input: typeof WithdrawRequestSchema;
        output: typeof WithdrawResponseSchema;
    };
}>;
