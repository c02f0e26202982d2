/** Values checked for the wire, and the daemon's errors read back as the client's own. */

import * as os from "node:os";
import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Advice as PbAdvice, RefusalReason, type ReportResponse } from "./gen/llmctl/v1/limiter_pb.js";
import type { Advice } from "./types.js";
import { ClaimHistoryLost, InvalidArgument, LeaseNotFound, LlmctlError, Unavailable, type ReasonCode } from "./errors.js";

export function newClientId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

export function count(name: string, v: number | undefined, dflt: number): bigint {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new InvalidArgument(`${name} must be a whole number of 0 or more, not ${String(v)}`);
  }
  return BigInt(n);
}

export function reasonCode(code: RefusalReason): ReasonCode {
  switch (code) {
    case RefusalReason.CAPACITY:
      return "capacity";
    case RefusalReason.CONCURRENCY:
      return "concurrency";
    case RefusalReason.COOLDOWN:
      return "cooldown";
    case RefusalReason.BREAKER_OPEN:
      return "breaker_open";
    case RefusalReason.RUN_BUDGET:
      return "run_budget";
    case RefusalReason.ROUTE_GROUP:
      return "route_group";
    case RefusalReason.STOPPING:
      return "stopping";
    case RefusalReason.TOO_LARGE:
      return "too_large";
    case RefusalReason.DAILY_QUOTA:
      return "daily_quota";
    case RefusalReason.PLAN_WINDOW:
      return "plan_window";
    case RefusalReason.CANCELLED:
      return "cancelled";
    case RefusalReason.UNSPECIFIED:
      return "";
    default:
      // A reason newer than this client: its number, never a guess.
      return `${Number(code)}`;
  }
}

/** `firstAttempt` as Unix ms (0: not given). Seconds are refused: they would read as 1970. */
export function unixMs(v: Date | number | undefined): number {
  if (v === undefined) {
    return 0;
  }
  const ms = v instanceof Date ? v.getTime() : v;
  if (!Number.isFinite(ms) || ms < 1e11 || ms > 1e14) {
    throw new InvalidArgument(`firstAttempt must be a Date or Unix milliseconds (like Date.now()), not ${String(v)}`);
  }
  return Math.round(ms);
}

export function int32(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new InvalidArgument(`${name} must be a whole number (a 32-bit one), not ${String(v)}`);
  }
  return n;
}

/** The longest client id, run id or other name the daemon takes, in bytes. */
export const MAX_NAME_BYTES = 256;

export function checkName(name: string, v: string): string {
  // eslint-disable-next-line no-control-regex
  if (Buffer.byteLength(v) > MAX_NAME_BYTES || /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(v)) {
    throw new InvalidArgument(`${name} ${JSON.stringify(v.slice(0, 64))} must be at most ${MAX_NAME_BYTES} bytes of visible characters`);
  }
  return v;
}

export function fromUnixMs(ms: bigint): Date | null {
  return ms > 0n ? new Date(Number(ms)) : null;
}

/** A daemon error as the client's own. */
export function translate(e: unknown, socket: string): unknown {
  if (!(e instanceof ConnectError)) {
    return e;
  }
  if (unreachable(e)) {
    return new Unavailable(`no llmctl daemon answered on ${socket}: ${e.rawMessage}`, socket);
  }
  switch (e.code) {
    case Code.InvalidArgument:
      return new InvalidArgument(e.rawMessage);
    case Code.NotFound:
      return new LeaseNotFound(e.rawMessage);
    case Code.DataLoss:
      return new ClaimHistoryLost(e.rawMessage);
    default:
      return new LlmctlError(e.rawMessage, Code[e.code]?.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase());
  }
}

/** Errors of the socket itself: no daemon listening, or it went away mid-call. */
const SOCKET_ERRORS = new Set(["ENOENT", "ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTSOCK", "ENOTDIR", "EACCES"]);

export function unreachable(e: unknown): boolean {
  if (!(e instanceof ConnectError)) {
    return false;
  }
  const cause = (e.cause as { code?: unknown } | undefined)?.code;
  // A daemon that does not answer within the call's bound (stopped, or stuck) is as absent, and
  // so is one whose connection closed under a call (its HTTP/2 stream cancelled: callers check
  // their own abort signal before asking this), and one that is stopping: its HTTP/2 server
  // refuses the streams that raced its GOAWAY, and a refused stream was never processed
  // (RFC 9113 section 8.7), so nothing was granted or recorded.
  return (
    e.code === Code.Unavailable ||
    e.code === Code.DeadlineExceeded ||
    (e.code === Code.Canceled && /stream closed|CANCEL/.test(e.rawMessage)) ||
    /REFUSED_STREAM/.test(e.rawMessage) ||
    (typeof cause === "string" && SOCKET_ERRORS.has(cause))
  );
}

const ACTIONS: Record<number, Advice["action"]> = {
  [PbAdvice.DONE]: "done",
  [PbAdvice.RETRY]: "retry",
  [PbAdvice.GIVE_UP]: "give_up",
  [PbAdvice.FALLBACK]: "fallback",
};

/** The daemon's advice as the client gives it: an advice this client does not know (a newer
 * daemon's) is "unknown", never taken for another. */
export function adviceOf(r: ReportResponse): Advice {
  return {
    action: ACTIONS[r.advice] ?? "unknown",
    retryAfterMs: Number(r.retryAfterMs),
    fallbackKey: r.fallbackKey,
    reason: r.reason,
  };
}
