/**
 * Estimating what a provider request will use, from its JSON body, before it is sent (the same
 * rule as the Python client): input tokens are the characters of the request's text divided by
 * 4, rounded up, plus 3 per message and 1000 per image or other media part; output tokens are
 * `max_tokens`, `max_completion_tokens` or `max_output_tokens` (times `n`), else 4096. The
 * daemon settles each lease with the real usage afterwards, so erring high is safe.
 */

export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_MESSAGE = 3;
export const IMAGE_TOKENS = 1000;
export const DEFAULT_OUTPUT_TOKENS = 4096;

const TEXT_FIELDS = ["messages", "system", "prompt", "input", "instructions", "contents", "tools", "functions"];
const SKIP_KEYS = new Set(["type", "role", "id", "tool_use_id", "tool_call_id", "call_id", "cache_control", "signature", "status"]);
const MEDIA_WORDS = ["image", "audio", "file", "document"];
// Bedrock Converse's media blocks are keyed by their kind, and always have a source:
// {"image": {"format": ..., "source": ...}} (a JSON schema's property named image has none).
const MEDIA_KEYS = ["image", "document", "video", "audio"];

function isObject(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export interface Estimate {
  model: string;
  inputTokens: number;
  outputTokens: number;
  stream: boolean;
  /** false when the body names no output bound (max_tokens and its kin). */
  outputDeclared: boolean;
}

function whole(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/** An estimate for a request body: an object, or its JSON text. */
export function estimateBody(body: unknown): Estimate {
  if (typeof body === "string") {
    try {
      body = body ? JSON.parse(body) : {};
    } catch {
      body = {};
    }
  }
  const b: Record<string, unknown> = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  let chars = 0;
  let media = 0;
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) {
      return;
    }
    if (typeof v === "string") {
      chars += v.length;
    } else if (Array.isArray(v)) {
      for (const x of v) {
        walk(x, depth + 1);
      }
    } else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if ((typeof o.type === "string" && MEDIA_WORDS.some((w) => (o.type as string).includes(w))) || "inline_data" in o || "inlineData" in o || MEDIA_KEYS.some((k) => isObject(o[k]) && "source" in (o[k] as Record<string, unknown>))) {
        media += 1;
        return;
      }
      for (const [k, x] of Object.entries(o)) {
        if (!SKIP_KEYS.has(k)) {
          walk(x, depth + 1);
        }
      }
    }
  };
  for (const f of TEXT_FIELDS) {
    if (f in b) {
      walk(b[f], 0);
    }
  }
  const messages = Array.isArray(b.messages) ? b.messages.length : 0;
  const input = Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages + IMAGE_TOKENS * media;
  let output = whole(b.max_tokens) ?? whole(b.max_completion_tokens) ?? whole(b.max_output_tokens);
  if (output === null) {
    const gen = (b.generationConfig ?? b.generation_config) as Record<string, unknown> | undefined;
    output = gen && typeof gen === "object" ? whole(gen.maxOutputTokens ?? gen.max_output_tokens) : null;
  }
  if (output === null) {
    // Bedrock Converse.
    const inference = b.inferenceConfig;
    output = isObject(inference) ? whole((inference as Record<string, unknown>).maxTokens) : null;
  }
  const outputDeclared = output !== null;
  output ??= DEFAULT_OUTPUT_TOKENS;
  const n = whole(b.n);
  if (n !== null && n > 1) {
    output *= n;
  }
  return {
    model: typeof b.model === "string" ? b.model : "",
    inputTokens: Math.max(1, input),
    outputTokens: output,
    stream: b.stream === true,
    outputDeclared,
  };
}

/** The estimate of a request's body as sent (its text); a request without a body reserves one
 * input token and the default output, undeclared. */
export function estimateRequest(raw: string): Estimate {
  return raw ? estimateBody(raw) : { model: "", inputTokens: 1, outputTokens: DEFAULT_OUTPUT_TOKENS, outputDeclared: false, stream: false };
}
