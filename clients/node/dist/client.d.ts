/**
 * The llmctl client: ask the daemon before each provider call (`acquire`), tell it what happened
 * (`lease.report`), and follow its advice. Mirrors the Python client.
 */
import { type Client as RpcClient } from "@connectrpc/connect";
import { Limiter, type StatusResponse } from "./gen/llmctl/v1/limiter_pb.js";
import { Lease } from "./lease.js";
import { type AcquireOptions, type Advice, type Claim, type ClientOptions, type FailMode, type ReportOptions } from "./types.js";
export { Lease } from "./lease.js";
export { FAIL_OPEN_ATTEMPTS, limitHeaders, localAdvice, parseUsage, usageOf } from "./report.js";
export { MAX_WAIT_MS, type AcquireOptions, type Advice, type Claim, type ClaimState, type ClientOptions, type FailMode, type HeadersLike, type ReportOptions } from "./types.js";
export { reasonCode } from "./wire.js";
export declare class Client {
    readonly socket: string;
    readonly failMode: FailMode;
    readonly clientId: string;
    private readonly rpc;
    private readonly session;
    private readonly callTimeoutMs;
    private warnedAt;
    private closed;
    /** Whether the last acquire was limited by the daemon (null before any): false while failing
     * open, so a wrong socket or a stopped daemon does not go unnoticed. */
    limited: boolean | null;
    /** Settles once a daemon started on first use answers (at once when none is started). */
    private readonly ready;
    /** Whether the daemon ever answered this client, and since when it has not (null: it does). */
    private answered;
    private downSince;
    /** @internal Bumped whenever the daemon may have lost its leases (it went away): a lease
     * from an earlier epoch that the daemon no longer knows was lost, not misused. */
    epoch: number;
    /** What this client knows of each key, to limit with while the daemon is away. */
    private readonly static;
    /** Leases granted and not yet reported: one its caller drops (a promise never awaited, a lease
     * or a response left unread) is reported cancelled when it is collected, not held to its TTL. */
    private readonly unreported;
    readonly failStaticForMs: number;
    constructor(options?: ClientOptions);
    /** Whether the Session with the daemon is open right now. */
    get connected(): boolean;
    /** Resolves true once the Session is open, false when `timeoutMs` passes first. */
    waitConnected(timeoutMs?: number): Promise<boolean>;
    /** Ends the Session (the daemon releases this client's slots). */
    close(): void;
    private checkOpen;
    private failOpen;
    /** Reserves capacity on `key` (and its ancestors), waiting in the daemon up to `maxWait` ms.
     * Throws `NotGranted` (or `RunBudgetExceeded`) when capacity will not come in time. */
    acquire(key: string | null, options?: AcquireOptions): Promise<Lease>;
    /** Settles a lease its caller dropped unreported. Nobody can say whether its request was
     * sent, so it counts as made (its concurrency slot freed, its tokens at the estimate), never
     * as a refusal. */
    /** A lease's place among this client's leases in flight on its key, given back once. */
    private release;
    private settleDropped;
    /** One Acquire call that an abort gives up on without leaving anything behind: the caller's
     * promise is rejected at once with the signal's reason, the wait is withdrawn (Withdraw by
     * its acquire id), and a grant the call brings as it ends is given back (Withdraw by its
     * lease id); the call itself is cut only when the daemon does not answer the withdrawal. */
    private acquireWithdrawable;
    /** Withdraws an abandoned wait and gives back the grant its call brings, if any. */
    private giveBack;
    /** The phase of the daemon's absence (conformance/fail_static.json), "up" while it answers. */
    private phase;
    /** While the daemon is away past its restart: waits for `name`'s turn at the rate and
     * concurrency this client was getting on it, up to `maxWaitMs`: whether the call was paced
     * and counted in flight ("paced"), not limited ("unlimited": nothing known of the key, or
     * past failStaticFor), or the daemon is back ("back": ask it). */
    private staticTurn;
    /** The answer of a daemon that answered this client before and went away less than
     * `RESTART_WAIT_MS` ago (restarting, most likely), once it is back, so that a restart sends
     * no call unlimited; null when it is not back in time. */
    private afterRestart;
    /** @internal Sends a lease's report. */
    sendReport(req: Parameters<RpcClient<typeof Limiter>["report"]>[0], o: ReportOptions, attempt: number, epoch?: number): Promise<Advice>;
    /** Stops granting on `key` (and below it) for `ms`; never shortens a cooldown. Resolves to
     * when it ends (null with fail-open and no daemon). */
    cooldown(key: string, ms: number, reason?: string): Promise<Date | null>;
    /** The daemon's state: keys, buckets, cooldowns, sessions, runs, clients. */
    status(keyPrefix?: string): Promise<StatusResponse>;
    /** Claims a job by its idempotency key: "claimed" (do it, then `complete`), "pending" (someone
     * else is doing it), or "done" with the stored result. */
    claim(key: string, options?: {
        ttlMs?: number;
        acceptLostHistory?: boolean;
    }): Promise<Claim>;
    /** Stores the result of a claimed job and marks it done. */
    complete(key: string, result?: Uint8Array | string): Promise<void>;
}
