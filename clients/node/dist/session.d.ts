/**
 * The client's Session with the daemon: one stream kept open for as long as the client lives.
 * When it ends (the process died, or the client closed), the daemon gives back the concurrency
 * slots of every lease acquired with the client's id. It runs on a connection of its own that
 * never keeps the Node process alive: only the calls the program awaits do.
 */
export declare class SessionKeeper {
    private readonly socket;
    private readonly clientId;
    private session;
    private retryMs;
    private timer;
    private closed;
    private waiters;
    /** Whether the daemon holds the session right now. */
    connected: boolean;
    /** Called when a session the daemon held ends (it went away, and may have lost its leases). */
    onLost: (() => void) | null;
    constructor(socket: string, clientId: string);
    /** Resolves true once the session is open, false when `timeoutMs` passes first. */
    waitConnected(timeoutMs: number): Promise<boolean>;
    close(): void;
    private open;
    /** The session ended: open it again after a pause that grows while the daemon is away. */
    private lost;
}
