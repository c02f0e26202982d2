/** A lease: capacity granted on a key, reported once with what happened. */
import type { Client } from "./client.js";
import type { Advice, ReportOptions } from "./types.js";
/** A granted reservation. Report it once with what happened. */
export declare class Lease {
    private readonly client;
    /** The key granted (the member, when a route group was asked for). */
    readonly key: string;
    readonly leaseId: string;
    /** False for a fail-open lease granted without the daemon. */
    readonly limited: boolean;
    readonly waitedMs: number;
    readonly expiresAt: Date | null;
    readonly attempt: number;
    private readonly firstAttemptMs;
    private done;
    /** @internal Called once, at the first report: the client counts its leases in flight per key. */
    onDone: (() => void) | null;
    /** @internal Called once the daemon took the report (or no report is to be sent): the lease
     * is then no longer the client's to settle if it is dropped. */
    onSettled: (() => void) | null;
    /** @internal The client's epoch when the lease was granted. */
    epoch: number;
    constructor(client: Client, 
    /** The key granted (the member, when a route group was asked for). */
    key: string, leaseId: string, 
    /** False for a fail-open lease granted without the daemon. */
    limited: boolean, waitedMs: number, expiresAt: Date | null, attempt: number, firstAttemptMs: number);
    private settled;
    get reported(): boolean;
    /** Settles the lease with what happened and returns the daemon's advice. */
    report(o: ReportOptions): Promise<Advice>;
    /** Reports from a fetch `Response` (status and headers; read usage from its body yourself, or
     * use `limitedFetch`), or from an SDK result with `.usage` (a success). */
    reportResponse(response: unknown): Promise<Advice>;
}
