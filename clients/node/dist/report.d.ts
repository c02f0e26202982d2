/** What a report carries, and the advice without the daemon (the rules: conformance/headers.json,
 * conformance/usage.json, conformance/advice.json). */
import type { Advice, HeadersLike, ReportOptions } from "./types.js";
/** The rate-limit and retry headers of `h`, as the daemon reads them. */
export declare function limitHeaders(h: HeadersLike | undefined): Record<string, string>;
/** Advice computed without the daemon (fail-open): retry what a retry may fix, a few times. */
/** The error type of a request its caller gave up on after sending it (conformance/advice.json). */
export declare const CANCELLED = "cancelled";
/** Attempts a call makes while the daemon cannot be asked (conformance/advice.json). */
export declare const FAIL_OPEN_ATTEMPTS = 4;
/** Advice when the daemon cannot be asked (fail open): the same classes, no shared state, at most
 * `FAIL_OPEN_ATTEMPTS` attempts (the rules: conformance/advice.json). */
export declare function localAdvice(o: ReportOptions, attempt: number): Advice;
/** Usage in any provider's shape, as [all input (cached included), cached input, output]. */
/** The usage of a JSON answer: its `usage` (OpenAI, Anthropic, Responses) or `usageMetadata`
 * (Gemini). */
export declare function usageOf(body: unknown): [number, number, number] | null;
export declare function parseUsage(u: unknown): [number, number, number] | null;
