export interface PathCall {
    limited: boolean;
    /** null: the path names none (the body's model is the one). */
    model: string | null;
    /** true: the path asks for a stream. */
    stream: boolean;
}
/** The call a request's path (without its query, as sent: still percent-encoded) names. */
export declare function pathCall(path: string): PathCall;
