/** Starting the daemon on first use: where no daemon answers on the default socket and an
 * `llmctl` binary is found (the active Python venv's, as `pip install "llmctl-client[daemon]"` puts it
 * there, then `PATH`), a client starts `llmctl daemon --idle-exit 10m` detached in a session of
 * its own, its log under the state folder, and waits for it (bounded). Many processes starting
 * at once start one daemon: the data folder's lock decides and the others connect.
 * `LLMCTL_AUTOSTART=0` turns this off; `LLMCTL_AUTOSTART_IDLE_EXIT` changes the bound. */

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/** How long a client waits for the daemon it started (or another process started) to answer. */
export const START_WAIT_MS = 10_000;
const DEFAULT_IDLE_EXIT = "10m";

/** Whether something accepts connections on the Unix socket at `socket`. */
export function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socket);
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

export function autostartEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.LLMCTL_AUTOSTART ?? "1").trim().toLowerCase();
  return !["0", "false", "no", "off"].includes(v);
}

function executable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The active venv's `llmctl`, else the first on `PATH`; null when there is none. */
export function findBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [...(env.VIRTUAL_ENV ? [path.join(env.VIRTUAL_ENV, "bin")] : []), ...(env.PATH ?? "").split(path.delimiter)];
  for (const d of dirs) {
    if (d && executable(path.join(d, "llmctl"))) {
      return path.join(d, "llmctl");
    }
  }
  return null;
}

/** `$XDG_STATE_HOME/llmctl`, else `~/.local/state/llmctl`: the daemon's own data folder. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state"), "llmctl");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a daemon on `socket` unless one answers there; true once one answers (within
 * `START_WAIT_MS`), false when none could be started (the client then fails open or closed as
 * it was told). */
export async function ensureDaemon(socket: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (await answers(socket)) {
    return true;
  }
  const binary = findBinary(env);
  if (binary === null) {
    process.emitWarning(
      `llmctl: no daemon on ${socket} and no llmctl binary on PATH to start one; install it with ` +
        '`pip install "llmctl-client[daemon]"`, or start one with `llmctl daemon`',
    );
    return false;
  }
  const dir = stateDir(env);
  const logPath = path.join(dir, "daemon.log");
  let log: number;
  try {
    fs.mkdirSync(dir, { recursive: true });
    log = fs.openSync(logPath, "a");
  } catch (e) {
    process.emitWarning(`llmctl: cannot write the daemon's log under ${dir}: ${String(e)}`);
    return false;
  }
  try {
    const child = spawn(binary, ["daemon", "--socket", socket, "--idle-exit", env.LLMCTL_AUTOSTART_IDLE_EXIT || DEFAULT_IDLE_EXIT], {
      detached: true,
      stdio: ["ignore", "ignore", log],
    });
    child.once("error", () => {});
    child.unref();
  } finally {
    fs.closeSync(log);
  }
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    if (await answers(socket)) {
      return true;
    }
    await sleep(20);
  }
  process.emitWarning(`llmctl: the daemon started on ${socket} did not answer within ${START_WAIT_MS / 1000} s; see ${logPath}`);
  return false;
}
