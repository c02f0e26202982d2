/** Starting the daemon on first use: where no daemon answers on the default socket and an
 * `llmctl` binary is found (the active Python venv's, as `pip install "llmctl-client[daemon]"` puts it
 * there, then `PATH`), a client starts `llmctl daemon --idle-exit 10m` detached in a session of
 * its own, its log under the state folder, and waits for it (bounded). Many processes starting
 * at once start one daemon: the data folder's lock decides and the others connect.
 * `LLMCTL_AUTOSTART=0` turns this off; `LLMCTL_AUTOSTART_IDLE_EXIT` changes the bound. */
/** How long a client waits for the daemon it started (or another process started) to answer. */
export declare const START_WAIT_MS = 10000;
/** Whether something accepts connections on the Unix socket at `socket`. */
export declare function answers(socket: string): Promise<boolean>;
export declare function autostartEnabled(env?: NodeJS.ProcessEnv): boolean;
/** The active venv's `llmctl`, else the first on `PATH`; null when there is none. */
export declare function findBinary(env?: NodeJS.ProcessEnv): string | null;
/** `$XDG_STATE_HOME/llmctl`, else `~/.local/state/llmctl`: the daemon's own data folder. */
export declare function stateDir(env?: NodeJS.ProcessEnv): string;
/** Starts a daemon on `socket` unless one answers there; true once one answers (within
 * `START_WAIT_MS`), false when none could be started (the client then fails open or closed as
 * it was told). */
export declare function ensureDaemon(socket: string, env?: NodeJS.ProcessEnv): Promise<boolean>;
