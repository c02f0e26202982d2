// Starting and stopping a real llmctl daemon and fake provider for the tests.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as readline from "node:readline";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "../../..");
export const BIN = process.env.LLMCTL_BIN ?? path.join(ROOT, "target/debug/llmctl");
// A client given no socket starts a daemon when none answers; the tests name their daemons'
// sockets, and those that test starting one turn it back on in their own processes.
process.env.LLMCTL_AUTOSTART ??= "0";

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `pred` until it is true, failing with `what` after `ms`. */
export async function waitUntil(pred, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await pred()) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(20);
  }
}

function answers(socket) {
  return new Promise((resolve) => {
    const s = net.connect(socket);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

export class Daemon {
  constructor(config = "") {
    // Short paths: a Unix socket path must fit in 108 bytes.
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmctl-node-"));
    this.socket = path.join(this.dir, "run", "llmctl.sock");
    this.data = path.join(this.dir, "state");
    this.config = path.join(this.dir, "config.toml");
    fs.writeFileSync(this.config, config);
  }

  async start() {
    const log = fs.openSync(path.join(this.dir, "daemon.log"), "a");
    this.proc = spawn(BIN, ["daemon", "--socket", this.socket, "--data-dir", this.data, "--config", this.config], {
      stdio: ["ignore", "ignore", log],
      env: { ...process.env, RUST_LOG: "warn" },
    });
    fs.closeSync(log);
    let exited = null;
    this.proc.once("exit", (code) => {
      exited = code;
    });
    await waitUntil(
      async () => {
        if (exited !== null) {
          throw new Error(`the daemon exited with ${exited}: ${this.log()}`);
        }
        return answers(this.socket);
      },
      15_000,
      "the daemon to answer",
    );
    return this;
  }

  log() {
    return fs.readFileSync(path.join(this.dir, "daemon.log"), "utf8");
  }

  cli(...args) {
    return spawnSync(BIN, args, { env: { ...process.env, LLMCTL_SOCKET: this.socket }, encoding: "utf8" });
  }

  status() {
    const o = this.cli("status", "--json");
    return JSON.parse(o.stdout);
  }

  key(name) {
    return this.status().keys.find((k) => k.key === name);
  }

  async stop() {
    if (this.proc && this.proc.exitCode === null) {
      const done = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await done;
    }
  }

  async close() {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function startDaemon(config = "") {
  return new Daemon(config).start();
}

export class Provider {
  static async start(...args) {
    const p = new Provider();
    p.proc = spawn(BIN, ["fake-provider", "--listen", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "inherit"] });
    const lines = readline.createInterface({ input: p.proc.stdout });
    const first = await new Promise((resolve, reject) => {
      lines.once("line", resolve);
      p.proc.once("exit", (c) => reject(new Error(`fake-provider exited with ${c}`)));
    });
    if (!first.startsWith("listening on http://127.0.0.1:")) {
      p.proc.kill();
      throw new Error(`fake-provider did not start: ${first}`);
    }
    p.url = first.slice("listening on ".length).replace(/\/$/, "");
    lines.on("line", () => {});
    return p;
  }

  async stats() {
    return (await fetch(`${this.url}/stats`)).json();
  }

  async reset() {
    await fetch(`${this.url}/reset`, { method: "POST" });
  }

  async faults(specs) {
    const r = await fetch(`${this.url}/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(specs) });
    if (!r.ok) {
      throw new Error(`faults ${JSON.stringify(specs)}: ${r.status} ${await r.text()}`);
    }
  }

  close() {
    this.proc.kill();
  }
}
