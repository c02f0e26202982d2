/**
 * Estimating what a provider request will use, from its JSON body, before it is sent (the same
 * rule as the Python client): input tokens are the characters of the request's text divided by
 * 4, rounded up, plus 3 per message and 1000 per image or other media part; output tokens are
 * `max_tokens`, `max_completion_tokens` or `max_output_tokens` (times `n`), else 4096. The
 * daemon settles each lease with the real usage afterwards, so erring high is safe.
 */
export declare const CHARS_PER_TOKEN = 4;
export declare const TOKENS_PER_MESSAGE = 3;
export declare const IMAGE_TOKENS = 1000;
export declare const DEFAULT_OUTPUT_TOKENS = 4096;
export interface Estimate {
    model: string;
    inputTokens: number;
    outputTokens: number;
    stream: boolean;
    /** false when the body names no output bound (max_tokens and its kin). */
    outputDeclared: boolean;
}
/** An estimate for a request body: an object, or its JSON text. */
export declare function estimateBody(body: unknown): Estimate;
/** The estimate of a request's body as sent (its text); a request without a body reserves one
 * input token and the default output, undeclared. */
export declare function estimateRequest(raw: string): Estimate;
