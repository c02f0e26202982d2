/**
 * A stream that omits its usage unless asked (OpenAI-style chat and legacy completions:
 * `stream_options.include_usage`) is asked for it when the caller did not, and the caller gets
 * the stream it would have had: the usage-only chunk dropped, the `usage` member of the other
 * chunks removed. An upstream that refuses the option (a 400 naming it) is asked again without
 * it, and not asked again (`conformance/stream_usage.json`).
 */
/** The body to send instead of `body` on `path`, asking for the stream's usage; null when the
 * caller asked already, or the call is not such a stream. */
export declare function askUsage(path: string, body: unknown): Record<string, unknown> | null;
/** Whether an error answer refuses the option: a 400 or 422 whose error message (or parameter,
 * or the error itself when it is a string) names `stream_options` (or `include_usage`); an error
 * that only echoes the request names nothing. */
export declare function refusesUsage(status: number, body: unknown): boolean;
export declare function refusedBy(origin: string): boolean;
/** Remembers that `origin` refuses the option; true the first time. */
export declare function rememberRefusal(origin: string): boolean;
/** `text` (an object's JSON) without its top-level member `key`, the rest as it was written;
 * null when it has no such member. */
export declare function withoutMember(text: string, key: string): string | null;
/** The caller's side of a stream whose usage was asked for on its behalf: fed the upstream's
 * bytes, it gives back the stream the caller would have had, whole events at a time. */
export declare class Unasked {
    private pending;
    feed(chunk: Uint8Array): Uint8Array;
    finish(): Uint8Array;
}
