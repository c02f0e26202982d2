/** Reading a provider's answer for its report: usage from a JSON body or from server-sent
 * events as they go by, and the error type and message of an error body. */
/** (error type, message) from a provider's error body, or ["", ""] when it names none: OpenAI
 * `{"error": {"type", "code", "message"}}` (a string code is the more precise), Anthropic
 * `{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"status", "message"}}`. */
export declare function errorInfo(body: unknown): [string, string];
/** What a stream of server-sent events said by its end. */
export interface StreamOutcome {
    usage: [number, number, number] | null;
    errorType: string;
    errorMessage: string;
    /** Whether output reached the caller. */
    output: boolean;
}
/** Watches server-sent events go by (the WHATWG rules, fed in byte chunks of any size). */
export declare class EventWatcher {
    private decoder;
    private pending;
    private data;
    private event;
    private usage;
    readonly outcome: StreamOutcome;
    feed(chunk: Uint8Array): void;
    finish(): StreamOutcome;
    private line;
    private dispatch;
}
