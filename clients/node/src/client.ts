/**
 * The llmctl client: ask the daemon before each provider call (`acquire`), tell it what happened
 * (`lease.report`), and follow its advice. Mirrors the Python client.
 */

import * as net from "node:net";
import { randomBytes } from "node:crypto";
import { createClient, type Client as RpcClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  ClaimResponse_State,
  Limiter,
  RefusalReason,
  type AcquireResponse,
  type StatusResponse,
} from "./gen/llmctl/v1/limiter_pb.js";
import {
  InvalidArgument,
  LeaseNotFound,
  LlmctlError,
  NotGranted,
  RunBudgetExceeded,
} from "./errors.js";
import { SessionKeeper } from "./session.js";
import { defaultSocket } from "./socket.js";
import { answers, autostartEnabled, ensureDaemon } from "./autostart.js";
import { FAIL_STATIC_FOR_MS, FailStatic, RESTART_WAIT_MS, outagePhase } from "./failstatic.js";

import { Lease } from "./lease.js";
import { CANCELLED, localAdvice } from "./report.js";
import { MAX_WAIT_MS, type AcquireOptions, type Advice, type Claim, type ClientOptions, type FailMode, type ReportOptions } from "./types.js";
import { adviceOf, checkName, count, fromUnixMs, int32, newClientId, reasonCode, translate, unixMs, unreachable } from "./wire.js";

export { Lease } from "./lease.js";
export { FAIL_OPEN_ATTEMPTS, limitHeaders, localAdvice, parseUsage, usageOf } from "./report.js";
export { MAX_WAIT_MS, type AcquireOptions, type Advice, type Claim, type ClaimState, type ClientOptions, type FailMode, type HeadersLike, type ReportOptions } from "./types.js";
export { reasonCode } from "./wire.js";

/** While failing open, a warning at most this often. */
const WARN_EVERY_MS = 60_000;
/** The longest giving back an abandoned wait or grant may take. */
const WITHDRAW_TIMEOUT_MS = 5_000;

function stopping(resp: AcquireResponse): boolean {
  return !resp.granted && resp.reasonCode === RefusalReason.STOPPING;
}

/** A client of the daemon on one socket. Keeps a Session open that never holds the Node
 * process alive on its own; `close()` ends it. */
/** What settles a lease dropped unreported (nothing that keeps the lease itself alive). */
interface Dropped {
  key: string;
  leaseId: string;
  epoch: number;
  /** Its place among the client's leases in flight was given back (at its first report). */
  released: boolean;
}

export class Client {
  readonly socket: string;
  readonly failMode: FailMode;
  readonly clientId: string;
  private readonly rpc: RpcClient<typeof Limiter>;
  private readonly session: SessionKeeper;
  private readonly callTimeoutMs: number;
  private warnedAt: number | null = null;
  private closed = false;
  /** Whether the last acquire was limited by the daemon (null before any): false while failing
   * open, so a wrong socket or a stopped daemon does not go unnoticed. */
  limited: boolean | null = null;
  /** Settles once a daemon started on first use answers (at once when none is started). */
  private readonly ready: Promise<unknown>;
  /** Whether the daemon ever answered this client, and since when it has not (null: it does). */
  private answered = false;
  private downSince: number | null = null;
  /** @internal Bumped whenever the daemon may have lost its leases (it went away): a lease
   * from an earlier epoch that the daemon no longer knows was lost, not misused. */
  epoch = 0;
  /** What this client knows of each key, to limit with while the daemon is away. */
  private readonly static = new FailStatic();
  /** Leases granted and not yet reported: one its caller drops (a promise never awaited, a lease
   * or a response left unread) is reported cancelled when it is collected, not held to its TTL. */
  private readonly unreported = new FinalizationRegistry<Dropped>((d) => void this.settleDropped(d));
  readonly failStaticForMs: number;

  constructor(options: ClientOptions = {}) {
    this.socket = options.socket ?? defaultSocket();
    // No socket named: where no daemon answers on the default one, start one (autostart.ts).
    this.ready = options.socket === undefined && autostartEnabled() ? ensureDaemon(this.socket) : Promise.resolve();
    this.failMode = options.failMode ?? "open";
    this.failStaticForMs = options.failStaticFor ?? FAIL_STATIC_FOR_MS;
    if (!Number.isFinite(this.failStaticForMs) || this.failStaticForMs < 0) {
      throw new InvalidArgument(`failStaticFor is in milliseconds, 0 or more; got ${String(options.failStaticFor)}`);
    }
    if (this.failMode !== "open" && this.failMode !== "closed") {
      throw new InvalidArgument(`failMode must be "open" or "closed", not ${JSON.stringify(this.failMode)}`);
    }
    this.clientId = checkName("clientId", options.clientId ?? newClientId());
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    const transport = createGrpcTransport({
      baseUrl: "http://localhost",
      nodeOptions: { createConnection: () => net.connect(this.socket) },
    });
    this.rpc = createClient(Limiter, transport);
    this.session = new SessionKeeper(this.socket, this.clientId);
    this.session.onLost = () => {
      this.epoch += 1;
    };
  }

  /** Whether the Session with the daemon is open right now. */
  get connected(): boolean {
    return this.session.connected;
  }

  /** Resolves true once the Session is open, false when `timeoutMs` passes first. */
  waitConnected(timeoutMs = 10_000): Promise<boolean> {
    this.checkOpen();
    return this.session.waitConnected(timeoutMs);
  }

  /** Ends the Session (the daemon releases this client's slots). */
  close(): void {
    this.closed = true;
    this.session.close();
  }

  private checkOpen(): void {
    if (this.closed) {
      throw new LlmctlError("this llmctl Client is closed; create a new one");
    }
  }

  private failOpen(e: unknown, stopping = false): boolean {
    if (this.failMode !== "open" || !(stopping || unreachable(e))) {
      return false;
    }
    if (this.downSince === null) {
      this.downSince = Date.now();
      this.epoch += 1;
    }
    const now = Date.now();
    if (this.warnedAt === null || now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      const why = e instanceof Error ? e.message : String(e);
      const what = this.answered
        ? `calls wait up to ${RESTART_WAIT_MS / 1000} s for it to come back, then are limited with what this client last knew of each key for up to ${this.failStaticForMs / 1000} s, then go unlimited until it is back`
        : "calls go unlimited until it is back";
      process.emitWarning(`llmctl: no daemon answering on ${this.socket} (${why}); ${what} (failMode "open")`);
    }
    return true;
  }

  /** Reserves capacity on `key` (and its ancestors), waiting in the daemon up to `maxWait` ms.
   * Throws `NotGranted` (or `RunBudgetExceeded`) when capacity will not come in time. */
  async acquire(key: string | null, options: AcquireOptions = {}): Promise<Lease> {
    this.checkOpen();
    await this.ready;
    const maxWait = options.maxWait ?? MAX_WAIT_MS;
    if (!Number.isFinite(maxWait) || maxWait < 0 || maxWait > MAX_WAIT_MS) {
      throw new InvalidArgument(`maxWait is in milliseconds, from 0 to ${MAX_WAIT_MS}; got ${String(options.maxWait)}`);
    }
    const attempt = int32("attempt", options.attempt, 1);
    const firstMs = unixMs(options.firstAttempt);
    const req = {
      key: key ?? "",
      requests: count("requests", options.requests, 1),
      inputTokens: count("inputTokens", options.inputTokens, 0),
      outputTokens: count("outputTokens", options.outputTokens, 0),
      priority: int32("priority", options.priority, 0),
      maxWaitMs: BigInt(Math.ceil(maxWait)),
      clientId: this.clientId,
      runId: checkName("runId", options.runId ?? ""),
      // Set only when given (optional on the wire: not set is none).
      routeGroup: options.routeGroup || undefined,
      profile: options.profile || undefined,
      outputTokensDeclared: options.outputTokensDeclared,
      // What Withdraw names when the caller aborts while the call waits.
      acquireId: randomBytes(16).toString("hex"),
    };
    const call = () => this.acquireWithdrawable(req, maxWait + this.callTimeoutMs, options.signal);
    let resp: AcquireResponse | null = null;
    let epoch = this.epoch;
    for (;;) {
      epoch = this.epoch;
      try {
        resp = await call();
      } catch (e) {
        if (options.signal?.aborted) {
          throw options.signal.reason;
        }
        if (!this.failOpen(e)) {
          throw translate(e, this.socket);
        }
      }
      if (resp !== null && stopping(resp) && this.failMode === "open") {
        // A stopping daemon is an unreachable one.
        this.failOpen(Object.assign(new Error("the daemon is stopping"), { code: "UNAVAILABLE_STOPPING" }), true);
        resp = null;
      }
      if (resp === null) {
        // Failing open, unless the daemon is only restarting: then the call waits for it.
        resp = await this.afterRestart(call, options.signal);
      }
      if (resp === null && this.phase() !== "up") {
        // Then limited with what this client last knew of the key, or not at all.
        const name = key ?? options.routeGroup ?? "";
        const turn = await this.staticTurn(name, maxWait, options.signal);
        if (turn !== "back") {
          this.limited = false;
          const lease = new Lease(this, name, "", false, 0, null, attempt, firstMs);
          if (turn === "paced") lease.onDone = () => this.static.released(name);
          return lease;
        }
      }
      if (resp !== null) break;
      // Another call found the daemon back while this one waited: it asks it too.
    }
    this.answered = true;
    this.downSince = null;
    this.limited = true;
    const asked = resp.key || key || options.routeGroup || "";
    if (!resp.granted) {
      const notBefore = fromUnixMs(resp.notBeforeUnixMs);
      const waited = Number(resp.waitedMs);
      if (resp.reasonCode === RefusalReason.RUN_BUDGET) {
        throw new RunBudgetExceeded(asked, resp.reason, notBefore, waited, req.runId);
      }
      throw new NotGranted(asked, resp.reason, reasonCode(resp.reasonCode), notBefore, waited);
    }
    const lease = new Lease(this, asked, resp.leaseId, true, Number(resp.waitedMs), fromUnixMs(resp.expiresUnixMs), attempt, firstMs);
    lease.epoch = epoch;
    this.static.granted(asked, Date.now());
    const dropped: Dropped = { key: asked, leaseId: resp.leaseId, epoch, released: false };
    this.unreported.register(lease, dropped, lease);
    lease.onDone = () => this.release(dropped);
    lease.onSettled = () => this.unreported.unregister(lease);
    return lease;
  }

  /** Settles a lease its caller dropped unreported. Nobody can say whether its request was
   * sent, so it counts as made (its concurrency slot freed, its tokens at the estimate), never
   * as a refusal. */
  /** A lease's place among this client's leases in flight on its key, given back once. */
  private release(d: Dropped): void {
    if (!d.released) {
      d.released = true;
      this.static.released(d.key);
    }
  }

  private async settleDropped(d: Dropped): Promise<void> {
    this.release(d);
    if (this.closed || d.epoch !== this.epoch) {
      // The Session's end (or the daemon's restart) released it already.
      return;
    }
    try {
      await this.rpc.report(
        { leaseId: d.leaseId, statusCode: 0, errorType: CANCELLED, errorMessage: "the lease was dropped unreported" },
        { timeoutMs: this.callTimeoutMs },
      );
    } catch {
      // Unheard: the daemon's TTL settles it.
    }
  }

  /** One Acquire call that an abort gives up on without leaving anything behind: the caller's
   * promise is rejected at once with the signal's reason, the wait is withdrawn (Withdraw by
   * its acquire id), and a grant the call brings as it ends is given back (Withdraw by its
   * lease id); the call itself is cut only when the daemon does not answer the withdrawal. */
  private acquireWithdrawable(req: { acquireId: string } & Parameters<RpcClient<typeof Limiter>["acquire"]>[0], timeoutMs: number, signal?: AbortSignal): Promise<AcquireResponse> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const cut = new AbortController();
    const answer = this.rpc.acquire(req, { timeoutMs, signal: cut.signal });
    if (!signal) return answer;
    return new Promise<AcquireResponse>((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason);
        void this.giveBack(req.acquireId, answer, cut);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      answer.then(
        (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        (e: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  }

  /** Withdraws an abandoned wait and gives back the grant its call brings, if any. */
  private async giveBack(acquireId: string, answer: Promise<AcquireResponse>, cut: AbortController): Promise<void> {
    const timer = setTimeout(() => cut.abort(), WITHDRAW_TIMEOUT_MS);
    try {
      await this.rpc.withdraw({ acquireId }, { timeoutMs: WITHDRAW_TIMEOUT_MS });
      const r = await answer;
      if (r.granted) await this.rpc.withdraw({ leaseId: r.leaseId }, { timeoutMs: WITHDRAW_TIMEOUT_MS });
    } catch {
      // The daemon away: the call is cut, and whatever it held lapses with the session.
      cut.abort();
    } finally {
      clearTimeout(timer);
    }
  }

  /** The phase of the daemon's absence (conformance/fail_static.json), "up" while it answers. */
  private phase(): "up" | "wait" | "static" | "open" {
    if (this.downSince === null) return "up";
    return outagePhase(Date.now() - this.downSince, this.answered, this.failStaticForMs);
  }

  /** While the daemon is away past its restart: waits for `name`'s turn at the rate and
   * concurrency this client was getting on it, up to `maxWaitMs`: whether the call was paced
   * and counted in flight ("paced"), not limited ("unlimited": nothing known of the key, or
   * past failStaticFor), or the daemon is back ("back": ask it). */
  private async staticTurn(name: string, maxWaitMs: number, signal?: AbortSignal): Promise<"paced" | "unlimited" | "back"> {
    const giveUp = Date.now() + maxWaitMs;
    while (this.phase() === "static" && this.downSince !== null) {
      const now = Date.now();
      const delay = this.static.take(name, this.downSince, now);
      if (delay === null) return "unlimited";
      if (delay === 0) return "paced";
      if (now + delay > giveUp) {
        throw new NotGranted(
          name,
          `the llmctl daemon on ${this.socket} is away, and what this client last knew of the key (its grant rate and concurrency) allows no call within maxWait`,
          "fail_static",
          null,
          maxWaitMs - (giveUp - now),
        );
      }
      if (signal?.aborted) throw signal.reason;
      await new Promise((r) => setTimeout(r, Math.min(delay, 100)));
    }
    return this.phase() === "up" ? "back" : "unlimited";
  }

  /** The answer of a daemon that answered this client before and went away less than
   * `RESTART_WAIT_MS` ago (restarting, most likely), once it is back, so that a restart sends
   * no call unlimited; null when it is not back in time. */
  private async afterRestart(call: () => Promise<AcquireResponse>, signal?: AbortSignal): Promise<AcquireResponse | null> {
    while (this.phase() === "wait") {
      if (signal?.aborted) {
        throw signal.reason;
      }
      if (await answers(this.socket)) {
        try {
          const resp = await call();
          if (!stopping(resp)) {
            return resp;
          }
        } catch (e) {
          if (signal?.aborted) {
            throw signal.reason;
          }
          if (!unreachable(e)) {
            throw translate(e, this.socket);
          }
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return null;
  }

  /** @internal Sends a lease's report. */
  async sendReport(
    req: Parameters<RpcClient<typeof Limiter>["report"]>[0],
    o: ReportOptions,
    attempt: number,
    epoch = this.epoch,
  ): Promise<Advice> {
    try {
      const r = await this.rpc.report(req, { timeoutMs: this.callTimeoutMs });
      // The daemon answers: an outage, if one began, is over.
      this.answered = true;
      this.downSince = null;
      return adviceOf(r);
    } catch (e) {
      if (this.failOpen(e)) {
        return localAdvice(o, attempt);
      }
      const err = translate(e, this.socket);
      if (err instanceof LeaseNotFound && this.failMode === "open" && epoch !== this.epoch) {
        // The daemon went away since this lease was granted and took it along.
        return localAdvice(o, attempt);
      }
      throw err;
    }
  }

  /** Stops granting on `key` (and below it) for `ms`; never shortens a cooldown. Resolves to
   * when it ends (null with fail-open and no daemon). */
  async cooldown(key: string, ms: number, reason = ""): Promise<Date | null> {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.cooldown({ key, durationMs: count("ms", ms, 0), reason }, { timeoutMs: this.callTimeoutMs });
      return fromUnixMs(r.untilUnixMs);
    } catch (e) {
      if (this.failOpen(e)) {
        return null;
      }
      throw translate(e, this.socket);
    }
  }

  /** The daemon's state: keys, buckets, cooldowns, sessions, runs, clients. */
  async status(keyPrefix = ""): Promise<StatusResponse> {
    this.checkOpen();
    await this.ready;
    try {
      return await this.rpc.status({ keyPrefix }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }

  /** Claims a job by its idempotency key: "claimed" (do it, then `complete`), "pending" (someone
   * else is doing it), or "done" with the stored result. */
  async claim(key: string, options: { ttlMs?: number; acceptLostHistory?: boolean } = {}): Promise<Claim> {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.claim(
        { key, ttlMs: count("ttlMs", options.ttlMs, 600_000), acceptLostHistory: options.acceptLostHistory ?? false },
        { timeoutMs: this.callTimeoutMs },
      );
      switch (r.state) {
        case ClaimResponse_State.CLAIMED:
          return { state: "claimed" };
        case ClaimResponse_State.PENDING:
          return { state: "pending", since: fromUnixMs(r.sinceUnixMs) ?? undefined };
        case ClaimResponse_State.DONE:
          return { state: "done", result: r.result };
        default:
          throw new LlmctlError(`the daemon answered claim state ${r.state}`);
      }
    } catch (e) {
      throw translate(e, this.socket);
    }
  }

  /** Stores the result of a claimed job and marks it done. */
  async complete(key: string, result: Uint8Array | string = new Uint8Array()): Promise<void> {
    this.checkOpen();
    await this.ready;
    const bytes = typeof result === "string" ? new TextEncoder().encode(result) : result;
    try {
      await this.rpc.complete({ key, result: bytes }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }
}


