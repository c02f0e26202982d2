// AWS event-stream frames (application/vnd.amazon.eventstream), as Bedrock's
// InvokeModelWithResponseStream answers, turned into the (event type, JSON data) pairs the event
// watcher reads: each `chunk` event's base64 `bytes` are the model's own stream event (an
// Anthropic message_start, say), and an exception frame is an error event.

export const CONTENT_TYPE = "application/vnd.amazon.eventstream";
/** The format's own bound on one message. */
const MAX_FRAME = 16 << 20;
const PRELUDE = 12;
/** Header value types with a fixed width (the format's types 0-9; 6 and 7 carry a length). */
const FIXED: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) {
      c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c = (CRC_TABLE[(c ^ x) & 0xff] ?? 0) ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

function headersOf(raw: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = new TextDecoder();
  let i = 0;
  while (i < raw.length) {
    const n = view.getUint8(i);
    const name = text.decode(raw.subarray(i + 1, i + 1 + n));
    i += 1 + n;
    const kind = view.getUint8(i);
    i += 1;
    if (kind === 6 || kind === 7) {
      const size = view.getUint16(i);
      if (kind === 7) {
        out.set(name, text.decode(raw.subarray(i + 2, i + 2 + size)));
      }
      i += 2 + size;
    } else if (FIXED[kind] !== undefined) {
      i += FIXED[kind];
    } else {
      throw new RangeError(`header type ${kind}`);
    }
  }
  return out;
}

/** AWS event-stream messages fed in byte chunks of any size; a frame that fails its checksum
 * stops the watching (the bytes still reach the caller). */
export class EventStreamParser {
  private buf = new Uint8Array(0);
  broken = false;

  feed(chunk: Uint8Array): [string, string][] {
    const events: [string, string][] = [];
    if (this.broken) {
      return events;
    }
    const joined = new Uint8Array(this.buf.length + chunk.length);
    joined.set(this.buf);
    joined.set(chunk, this.buf.length);
    this.buf = joined;
    while (this.buf.length >= PRELUDE) {
      const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      const total = view.getUint32(0);
      const headerLen = view.getUint32(4);
      if (crc32(this.buf.subarray(0, 8)) !== view.getUint32(8) || total > MAX_FRAME || total < PRELUDE + headerLen + 4) {
        return this.break(events);
      }
      if (this.buf.length < total) {
        break;
      }
      const frame = this.buf.subarray(0, total);
      this.buf = this.buf.slice(total);
      if (crc32(frame.subarray(0, total - 4)) !== new DataView(frame.buffer, frame.byteOffset).getUint32(total - 4)) {
        return this.break(events);
      }
      let headers: Map<string, string>;
      try {
        headers = headersOf(frame.subarray(PRELUDE, PRELUDE + headerLen));
      } catch {
        return this.break(events);
      }
      const event = message(headers, frame.subarray(PRELUDE + headerLen, total - 4));
      if (event) {
        events.push(event);
      }
    }
    return events;
  }

  private break(events: [string, string][]): [string, string][] {
    this.broken = true;
    this.buf = new Uint8Array(0);
    return events;
  }
}

function message(headers: Map<string, string>, payload: Uint8Array): [string, string] | null {
  const kind = headers.get(":message-type");
  const text = new TextDecoder().decode(payload);
  if (kind === "exception" || kind === "error") {
    let msg = text;
    try {
      const m = (JSON.parse(text) as { message?: unknown }).message;
      msg = typeof m === "string" ? m : "";
    } catch {
      // the payload as it came
    }
    const type = headers.get(":exception-type") ?? headers.get(":error-code") ?? "stream_error";
    return ["error", JSON.stringify({ error: { type, message: msg } })];
  }
  if (kind !== "event") {
    return null;
  }
  const event = headers.get(":event-type") ?? "";
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    return null;
  }
  const bytes = (body as { bytes?: unknown } | null)?.bytes;
  if (event === "chunk" && typeof bytes === "string") {
    return ["chunk", Buffer.from(bytes, "base64").toString("utf8")];
  }
  return [event, JSON.stringify(body)];
}
