/** Where the daemon listens, searched as the daemon itself searches. */
/** `$LLMCTL_SOCKET`, else `$XDG_RUNTIME_DIR/llmctl/llmctl.sock`, else `/tmp/llmctl-$UID/llmctl.sock`. */
export declare function defaultSocket(env?: NodeJS.ProcessEnv): string;
