/** Limiting while the daemon cannot be asked (the rules: conformance/fail_static.json).
 *
 * A daemon that answered this client before and went away is taken as restarting: for
 * `RESTART_WAIT_MS` calls wait for it. Then, until `failStaticFor`, each key is limited with what
 * this client last knew of it: the rate of the grants it received on the key in the `WINDOW_MS`
 * before the outage (the smaller of their count over their span and one over the median time
 * between two: a burst granted at once is not the rate), a second of it as a burst, and the most
 * of its leases in flight at once. Then calls fail open. A key it knows nothing of is not
 * limited. Pure: times are passed in (ms). */

export const RESTART_WAIT_MS = 5_000;
export const FAIL_STATIC_FOR_MS = 60_000;
export const WINDOW_MS = 10_000;
const MAX_GRANTS = 4096;
const MAX_KEYS = 1024;

export type Phase = "wait" | "static" | "open";

/** The phase of an outage of `outageMs`. */
export function outagePhase(outageMs: number, answered: boolean, failStaticForMs = FAIL_STATIC_FOR_MS): Phase {
  if (!answered) return "open";
  if (outageMs < RESTART_WAIT_MS) return "wait";
  if (outageMs < failStaticForMs) return "static";
  return "open";
}

export interface StaticLimits {
  ratePerS: number;
  burst: number;
  concurrency: number;
}

/** The limits from grants `grantsAgoMs` before the outage; null when none was in the window. */
export function staticLimits(grantsAgoMs: number[], inFlightMax: number): StaticLimits | null {
  const ago = grantsAgoMs.filter((g) => g >= 0 && g <= WINDOW_MS).sort((a, b) => a - b);
  if (ago.length === 0) return null;
  const span = Math.min(Math.max(ago[ago.length - 1]!, 1000), WINDOW_MS) / 1000;
  let rate = ago.length / span;
  const gaps = ago
    .slice(1)
    .map((g, i) => (g - ago[i]!) / 1000)
    .sort((a, b) => a - b);
  if (gaps.length > 0) {
    const mid = Math.floor(gaps.length / 2);
    const median = gaps.length % 2 ? gaps[mid]! : (gaps[mid - 1]! + gaps[mid]!) / 2;
    if (median > 0) rate = Math.min(rate, 1 / median);
  }
  return { ratePerS: rate, burst: Math.max(1, Math.floor(rate)), concurrency: Math.max(1, inFlightMax) };
}

interface KeyMemory {
  grants: number[];
  peaks: [number, number][];
  inFlight: number;
  bucket: { start: number; limits: StaticLimits; level: number; last: number } | null;
}

/** What a client knows of each key, and the static phase's local buckets. */
export class FailStatic {
  private readonly keys = new Map<string, KeyMemory>();

  private key(name: string): KeyMemory {
    let k = this.keys.get(name);
    if (!k) {
      if (this.keys.size >= MAX_KEYS) {
        // The key granted longest ago with nothing in flight (its leases release it).
        const oldest = [...this.keys.entries()]
          .filter(([, v]) => v.inFlight === 0)
          .sort((a, b) => (a[1].grants.at(-1) ?? 0) - (b[1].grants.at(-1) ?? 0))[0];
        if (oldest) this.keys.delete(oldest[0]);
      }
      k = { grants: [], peaks: [], inFlight: 0, bucket: null };
      this.keys.set(name, k);
    }
    return k;
  }

  /** A lease on `name` began: granted by the daemon, or by the static phase. */
  granted(name: string, now: number, byDaemon = true): void {
    const k = this.key(name);
    k.inFlight += 1;
    if (byDaemon) {
      k.grants.push(now);
      k.peaks.push([now, k.inFlight]);
      if (k.grants.length > MAX_GRANTS) k.grants.shift();
      if (k.peaks.length > MAX_GRANTS) k.peaks.shift();
    }
  }

  /** A lease on `name` ended. */
  released(name: string): void {
    const k = this.keys.get(name);
    if (k && k.inFlight > 0) k.inFlight -= 1;
  }

  private limits(k: KeyMemory, outageStart: number): StaticLimits | null {
    const peak = Math.max(0, ...k.peaks.filter(([t]) => outageStart - t >= 0 && outageStart - t <= WINDOW_MS).map(([, n]) => n));
    return staticLimits(
      k.grants.map((t) => outageStart - t),
      peak,
    );
  }

  /** In the static phase: 0 when a call on `name` may go now (counted in flight), else how many
   * ms to wait before asking again; null when `name` is not limited (nothing known). */
  take(name: string, outageStart: number, now: number): number | null {
    const k = this.keys.get(name);
    if (!k) return null;
    if (!k.bucket || k.bucket.start !== outageStart) {
      const limits = this.limits(k, outageStart);
      if (!limits) return null;
      k.bucket = { start: outageStart, limits, level: limits.burst, last: now };
    }
    const b = k.bucket;
    b.level = Math.min(b.limits.burst, b.level + ((now - b.last) / 1000) * b.limits.ratePerS);
    b.last = now;
    if (k.inFlight >= b.limits.concurrency) return 50;
    if (b.level >= 1) {
      b.level -= 1;
      k.inFlight += 1;
      return 0;
    }
    return ((1 - b.level) / b.limits.ratePerS) * 1000;
  }
}
