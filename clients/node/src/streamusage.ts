/**
 * A stream that omits its usage unless asked (OpenAI-style chat and legacy completions:
 * `stream_options.include_usage`) is asked for it when the caller did not, and the caller gets
 * the stream it would have had: the usage-only chunk dropped, the `usage` member of the other
 * chunks removed. An upstream that refuses the option (a 400 naming it) is asked again without
 * it, and not asked again (`conformance/stream_usage.json`).
 */

/** Origins that answered 400 to stream_options: not asked again. */
const refusing = new Set<string>();

/** The body to send instead of `body` on `path`, asking for the stream's usage; null when the
 * caller asked already, or the call is not such a stream. */
export function askUsage(path: string, body: unknown): Record<string, unknown> | null {
  const p = path.split("?")[0]!.replace(/\/+$/, "");
  if (!body || typeof body !== "object" || Array.isArray(body) || !p.endsWith("/completions")) {
    return null;
  }
  const b = body as Record<string, unknown>;
  if (b.stream !== true) {
    return null;
  }
  const options = b.stream_options;
  const kept = options && typeof options === "object" && !Array.isArray(options) ? (options as Record<string, unknown>) : {};
  if (kept.include_usage === true) {
    return null;
  }
  return { ...b, stream_options: { ...kept, include_usage: true } };
}

/** Whether an error answer refuses the option: a 400 or 422 whose error message (or parameter,
 * or the error itself when it is a string) names `stream_options` (or `include_usage`); an error
 * that only echoes the request names nothing. */
export function refusesUsage(status: number, body: unknown): boolean {
  if ((status !== 400 && status !== 422) || !body || typeof body !== "object") {
    return false;
  }
  const b = body as Record<string, unknown>;
  const error = b.error && typeof b.error === "object" ? (b.error as Record<string, unknown>) : {};
  return [error.message, error.param, b.error, b.message, b.detail].some(
    (s) => typeof s === "string" && (s.includes("stream_options") || s.includes("include_usage")),
  );
}

export function refusedBy(origin: string): boolean {
  return refusing.has(origin);
}

/** Remembers that `origin` refuses the option; true the first time. */
export function rememberRefusal(origin: string): boolean {
  if (refusing.has(origin)) {
    return false;
  }
  refusing.add(origin);
  return true;
}

const WS = new Set([" ", "\t", "\r", "\n"]);

/** The end of the JSON value starting at `i`, or -1. */
function skipValue(t: string, i: number): number {
  const c = t[i];
  if (c === '"') {
    for (let j = i + 1; j < t.length; j++) {
      if (t[j] === "\\") {
        j++;
      } else if (t[j] === '"') {
        return j + 1;
      }
    }
    return -1;
  }
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j = i; j < t.length; j++) {
      const d = t[j];
      if (d === '"') {
        const end = skipValue(t, j);
        if (end < 0) {
          return -1;
        }
        j = end - 1;
      } else if (d === "{" || d === "[") {
        depth++;
      } else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) {
          return j + 1;
        }
      }
    }
    return -1;
  }
  let j = i;
  while (j < t.length && !",}]".includes(t[j]!) && !WS.has(t[j]!)) {
    j++;
  }
  return j;
}

/** `text` (an object's JSON) without its top-level member `key`, the rest as it was written;
 * null when it has no such member. */
export function withoutMember(text: string, key: string): string | null {
  const ws = (i: number) => {
    while (i < text.length && WS.has(text[i]!)) {
      i++;
    }
    return i;
  };
  let i = ws(0);
  if (text[i] !== "{") {
    return null;
  }
  i++;
  let prevComma = -1;
  for (;;) {
    i = ws(i);
    if (text[i] !== '"') {
      return null;
    }
    const member = i;
    const keyEnd = skipValue(text, i);
    if (keyEnd < 0) {
      return null;
    }
    let name: unknown;
    try {
      name = JSON.parse(text.slice(member, keyEnd));
    } catch {
      return null;
    }
    i = ws(keyEnd);
    if (text[i] !== ":") {
      return null;
    }
    const valueEnd = skipValue(text, ws(i + 1));
    if (valueEnd < 0) {
      return null;
    }
    const after = ws(valueEnd);
    const comma = text[after] === ",";
    if (name === key) {
      const [from, to] = comma ? [member, ws(after + 1)] : prevComma >= 0 ? [prevComma, valueEnd] : [member, valueEnd];
      return text.slice(0, from) + text.slice(to);
    }
    if (!comma) {
      return null;
    }
    prevComma = after;
    i = after + 1;
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

function eventOut(event: Uint8Array): Uint8Array {
  let text: string;
  try {
    text = decoder.decode(event);
  } catch {
    return event;
  }
  const data = text
    .split(/\r\n|\r|\n/)
    .filter((l) => l.startsWith("data:"))
    .map((l) => (l.startsWith("data: ") ? l.slice(6) : l.slice(5)));
  if (data.length !== 1) {
    return event;
  }
  let chunk: unknown;
  try {
    chunk = JSON.parse(data[0]!);
  } catch {
    return event;
  }
  if (!chunk || typeof chunk !== "object" || Array.isArray(chunk) || !("usage" in chunk)) {
    return event;
  }
  const c = chunk as Record<string, unknown>;
  if (Array.isArray(c.choices) && c.choices.length === 0 && c.usage && typeof c.usage === "object") {
    return new Uint8Array(0);
  }
  if (c.usage !== null) {
    return event; // usage a provider puts on a content chunk unasked is the caller's
  }
  const rewritten = withoutMember(data[0]!, "usage");
  return rewritten === null ? event : encoder.encode(text.replace(data[0]!, () => rewritten));
}

/** The caller's side of a stream whose usage was asked for on its behalf: fed the upstream's
 * bytes, it gives back the stream the caller would have had, whole events at a time. */
export class Unasked {
  private pending = new Uint8Array(0);

  feed(chunk: Uint8Array): Uint8Array {
    const buf = new Uint8Array(this.pending.length + chunk.length);
    buf.set(this.pending);
    buf.set(chunk, this.pending.length);
    const out: Uint8Array[] = [];
    let start = 0;
    let lineStart = 0;
    let i = 0;
    while (i < buf.length) {
      const c = buf[i];
      let end: number;
      if (c === 0x0a) {
        end = i + 1;
      } else if (c === 0x0d) {
        if (i + 1 === buf.length) {
          break; // its \n may come in the next chunk
        }
        end = buf[i + 1] === 0x0a ? i + 2 : i + 1;
      } else {
        i++;
        continue;
      }
      if (i === lineStart) {
        // A blank line ends an event.
        out.push(eventOut(buf.subarray(start, end)));
        start = end;
      }
      lineStart = end;
      i = end;
    }
    this.pending = buf.slice(start);
    return concat(out);
  }

  finish(): Uint8Array {
    const rest = this.pending;
    this.pending = new Uint8Array(0);
    return rest;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
