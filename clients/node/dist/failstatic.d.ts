/** Limiting while the daemon cannot be asked (the rules: conformance/fail_static.json).
 *
 * A daemon that answered this client before and went away is taken as restarting: for
 * `RESTART_WAIT_MS` calls wait for it. Then, until `failStaticFor`, each key is limited with what
 * this client last knew of it: the rate of the grants it received on the key in the `WINDOW_MS`
 * before the outage (the smaller of their count over their span and one over the median time
 * between two: a burst granted at once is not the rate), a second of it as a burst, and the most
 * of its leases in flight at once. Then calls fail open. A key it knows nothing of is not
 * limited. Pure: times are passed in (ms). */
export declare const RESTART_WAIT_MS = 5000;
export declare const FAIL_STATIC_FOR_MS = 60000;
export declare const WINDOW_MS = 10000;
export type Phase = "wait" | "static" | "open";
/** The phase of an outage of `outageMs`. */
export declare function outagePhase(outageMs: number, answered: boolean, failStaticForMs?: number): Phase;
export interface StaticLimits {
    ratePerS: number;
    burst: number;
    concurrency: number;
}
/** The limits from grants `grantsAgoMs` before the outage; null when none was in the window. */
export declare function staticLimits(grantsAgoMs: number[], inFlightMax: number): StaticLimits | null;
/** What a client knows of each key, and the static phase's local buckets. */
export declare class FailStatic {
    private readonly keys;
    private key;
    /** A lease on `name` began: granted by the daemon, or by the static phase. */
    granted(name: string, now: number, byDaemon?: boolean): void;
    /** A lease on `name` ended. */
    released(name: string): void;
    private limits;
    /** In the static phase: 0 when a call on `name` may go now (counted in flight), else how many
     * ms to wait before asking again; null when `name` is not limited (nothing known). */
    take(name: string, outageStart: number, now: number): number | null;
}
