/** A lease: capacity granted on a key, reported once with what happened. */

import type { Client } from "./client.js";
import { InvalidArgument, LeaseNotFound, LlmctlError } from "./errors.js";
import { limitHeaders, localAdvice, usageOf } from "./report.js";
import type { Advice, ReportOptions } from "./types.js";
import { count, int32 } from "./wire.js";

/** A granted reservation. Report it once with what happened. */
export class Lease {
  private done = false;
  /** @internal Called once, at the first report: the client counts its leases in flight per key. */
  onDone: (() => void) | null = null;
  /** @internal Called once the daemon took the report (or no report is to be sent): the lease
   * is then no longer the client's to settle if it is dropped. */
  onSettled: (() => void) | null = null;
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

  private settled(): void {
    const f = this.onSettled;
    this.onSettled = null;
    f?.();
  }

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
      answeredUnixMs: count("answeredUnixMs", o.answeredUnixMs, 0),
    };
    this.done = true;
    const onDone = this.onDone;
    this.onDone = null;
    onDone?.();
    if (!this.limited) {
      this.settled();
      return localAdvice(o, attempt);
    }
    try {
      const advice = await this.client.sendReport(req, o, attempt, this.epoch);
      this.settled();
      return advice;
    } catch (e) {
      // Not heard: the same report may be sent again (a settled lease answers NOT_FOUND).
      if (!(e instanceof LeaseNotFound)) {
        this.done = false;
      } else {
        this.settled();
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
