/** Values checked for the wire, and the daemon's errors read back as the client's own. */
import { RefusalReason, type ReportResponse } from "./gen/llmctl/v1/limiter_pb.js";
import type { Advice } from "./types.js";
import { type ReasonCode } from "./errors.js";
export declare function newClientId(): string;
export declare function count(name: string, v: number | undefined, dflt: number): bigint;
export declare function reasonCode(code: RefusalReason): ReasonCode;
/** `firstAttempt` as Unix ms (0: not given). Seconds are refused: they would read as 1970. */
export declare function unixMs(v: Date | number | undefined): number;
export declare function int32(name: string, v: number | undefined, dflt: number): number;
/** The longest client id, run id or other name the daemon takes, in bytes. */
export declare const MAX_NAME_BYTES = 256;
export declare function checkName(name: string, v: string): string;
export declare function fromUnixMs(ms: bigint): Date | null;
/** A daemon error as the client's own. */
export declare function translate(e: unknown, socket: string): unknown;
export declare function unreachable(e: unknown): boolean;
/** The daemon's advice as the client gives it: an advice this client does not know (a newer
 * daemon's) is "unknown", never taken for another. */
export declare function adviceOf(r: ReportResponse): Advice;
