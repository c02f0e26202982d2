/**
 * `limitedFetch`: a drop-in `fetch` that asks the daemon before each try, reports each try with
 * the provider's usage, and follows the daemon's advice: wait and retry, or hand the answer to
 * the caller (also for a fallback, which would need the request rewritten for another
 * provider). For the SDKs:
 *
 *     new OpenAI({ fetch: limitedFetch({ client, key: "openai/gpt-5.5" }), maxRetries: 0 })
 *     new Anthropic({ fetch: limitedFetch({ client, key: "anthropic/opus" }), maxRetries: 0 })
 *
 * Usage is read from JSON bodies and from server-sent events as they go by, without consuming
 * anything the caller reads.
 */
import type { Client, Lease, ReportOptions } from "./client.js";
import type { Advice } from "./client.js";
export interface LimitedFetchOptions {
    client: Client;
    /** The key each call acquires on (or give `routeGroup`). */
    /** The quota to acquire on; `{model}` in it is replaced by the request's model. */
    key?: string;
    routeGroup?: string;
    /** The fetch to call (default: the global one). */
    fetch?: typeof fetch;
    priority?: number;
    /** How long each acquire may wait in the daemon, in ms (default an hour). */
    maxWait?: number;
    runId?: string;
    profile?: string;
    /** A bound on tries whatever the advice (default 20). */
    maxAttempts?: number;
}
/** Reports a try; a daemon that cannot take the report does not cost the caller the answer the
 * provider gave (a warning says so, once). `onAdvice` is given the advice the report got. */
export declare function reportSafely(lease: Lease, o: ReportOptions, onAdvice?: (advice: Advice) => void): Promise<Advice | null>;
/** A `fetch` that goes through the daemon. */
export declare function limitedFetch(options: LimitedFetchOptions): typeof fetch;
/** A key template's typos fail when `limitedFetch` is built, not at the first request: only
 * `{model}` is replaced (by the request's model), and what is left must be a key the daemon
 * takes (segments of visible characters between single slashes, at most 256 bytes). */
export declare function checkKeyTemplate(key: string): void;
