/** Where the daemon listens, searched as the daemon itself searches. */

import * as os from "node:os";

/** `$LLMCTL_SOCKET`, else `$XDG_RUNTIME_DIR/llmctl/llmctl.sock`, else `/tmp/llmctl-$UID/llmctl.sock`. */
export function defaultSocket(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LLMCTL_SOCKET) {
    return env.LLMCTL_SOCKET;
  }
  if (env.XDG_RUNTIME_DIR) {
    return `${env.XDG_RUNTIME_DIR}/llmctl/llmctl.sock`;
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().uid;
  return `/tmp/llmctl-${uid}/llmctl.sock`;
}
