/**
 * The client's Session with the daemon: one stream kept open for as long as the client lives.
 * When it ends (the process died, or the client closed), the daemon gives back the concurrency
 * slots of every lease acquired with the client's id. It runs on a connection of its own that
 * never keeps the Node process alive: only the calls the program awaits do.
 */

import * as http2 from "node:http2";
import * as net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { SessionRequestSchema } from "./gen/llmctl/v1/limiter_pb.js";

const PATH = "/llmctl.v1.Limiter/Session";
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

export class SessionKeeper {
  private session: http2.ClientHttp2Session | undefined;
  private retryMs = RETRY_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private waiters: Array<() => void> = [];
  /** Whether the daemon holds the session right now. */
  connected = false;
  /** Called when a session the daemon held ends (it went away, and may have lost its leases). */
  onLost: (() => void) | null = null;

  constructor(
    private readonly socket: string,
    private readonly clientId: string,
  ) {
    this.open();
  }

  /** Resolves true once the session is open, false when `timeoutMs` passes first. */
  waitConnected(timeoutMs: number): Promise<boolean> {
    if (this.connected) {
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        resolve(true);
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.session?.destroy();
    this.session = undefined;
    this.connected = false;
  }

  private open(): void {
    if (this.closed) {
      return;
    }
    const session = http2.connect("http://localhost", {
      createConnection: () => net.connect(this.socket),
    });
    this.session = session;
    session.unref();
    session.on("error", () => this.lost(session));
    session.on("close", () => this.lost(session));
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      te: "trailers",
    });
    // The daemon answers an accepted Session with a first event; a refused one ends with an
    // error status and no event. Events carry nothing else the client needs.
    stream.on("data", () => {
      if (!this.connected && this.session === session) {
        this.connected = true;
        this.retryMs = RETRY_MIN_MS;
        for (const w of this.waiters.splice(0)) {
          w();
        }
      }
    });
    stream.on("error", () => this.lost(session));
    stream.on("close", () => this.lost(session));
    const msg = toBinary(SessionRequestSchema, create(SessionRequestSchema, { clientId: this.clientId, pid: process.pid }));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(msg.length, 1);
    frame.set(msg, 5);
    stream.end(frame);
  }

  /** The session ended: open it again after a pause that grows while the daemon is away. */
  private lost(session: http2.ClientHttp2Session): void {
    if (this.session !== session) {
      return;
    }
    this.session = undefined;
    const wasConnected = this.connected;
    this.connected = false;
    session.destroy();
    if (this.closed) {
      return;
    }
    if (wasConnected) {
      this.onLost?.();
    }
    this.timer = setTimeout(() => this.open(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
}
