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
export declare class EventWatcher {
    private decoder;
    private pending;
    private data;
    private event;
    private usage;
    /** Bedrock's invocation metrics, for a model whose own events carry no usage. */
    private metrics;
    /** Set for AWS event-stream answers (Bedrock's), which are frames, not lines. */
    private frames;
    readonly outcome: StreamOutcome;
    /** `contentType`: the answer's; server-sent events unless it is AWS's event stream. */
    constructor(contentType?: string);
    feed(chunk: Uint8Array): void;
    finish(): StreamOutcome;
    private line;
    /** One event already taken out of its stream (`data`: its JSON text), as if it had come. */
    feedEvent(name: string, data: string): void;
    private dispatch;
}
