//! What a request will use, estimated from its JSON body before it is sent
//! (`conformance/estimates.json`, the same rule as the Python and Node clients).
//!
//! Input tokens are the characters of the request's text divided by 4, rounded up, plus 3 per
//! message and 1000 per image, audio or file part; text is every string under the body's text
//! fields apart from structural ones (type, role, ids). Output tokens are the body's bound
//! (`max_tokens` and its kin, times `n` choices), else [`DEFAULT_OUTPUT_TOKENS`] and the output
//! counts as undeclared, so the daemon reserves what answers on the key produced lately.

use serde_json::Value;

pub const CHARS_PER_TOKEN: u64 = 4;
pub const TOKENS_PER_MESSAGE: u64 = 3;
pub const MEDIA_TOKENS: u64 = 1000;
pub const DEFAULT_OUTPUT_TOKENS: u64 = 4096;

const TEXT_FIELDS: [&str; 8] = [
    "messages",
    "system",
    "prompt",
    "input",
    "instructions",
    "contents",
    "tools",
    "functions",
];
const SKIP_KEYS: [&str; 9] = [
    "type",
    "role",
    "id",
    "tool_use_id",
    "tool_call_id",
    "call_id",
    "cache_control",
    "signature",
    "status",
];
const MEDIA_WORDS: [&str; 4] = ["image", "audio", "file", "document"];
/// Bedrock Converse's media blocks are keyed by their kind, and always have a source:
/// `{"image": {"format": …, "source": …}}` (a JSON schema's property named image has none).
const MEDIA_KEYS: [&str; 4] = ["image", "document", "video", "audio"];
const OUTPUT_FIELDS: [&str; 3] = ["max_tokens", "max_completion_tokens", "max_output_tokens"];

/// One request's estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// The body's `model`; empty when it names none.
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// False when the body names no output bound.
    pub output_declared: bool,
    /// The body asks for a streamed answer (`"stream": true`).
    pub stream: bool,
}

#[derive(Default)]
struct Counter {
    chars: u64,
    media: u64,
}

impl Counter {
    fn walk(&mut self, v: &Value, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::String(s) => self.chars += s.chars().count() as u64,
            Value::Array(items) => items.iter().for_each(|x| self.walk(x, depth + 1)),
            Value::Object(o) => {
                let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
                if MEDIA_WORDS.iter().any(|w| kind.contains(w))
                    || o.contains_key("inline_data")
                    || o.contains_key("inlineData")
                    || MEDIA_KEYS
                        .iter()
                        .any(|k| o.get(*k).and_then(|m| m.get("source")).is_some())
                {
                    self.media += 1;
                    return;
                }
                for (k, x) in o {
                    if !SKIP_KEYS.contains(&k.as_str()) {
                        self.walk(x, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A whole, non-negative count (a JSON integer; `true` or 1.5 are not counts).
fn whole(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

/// The output bound a body names, if any: `max_tokens`, `max_completion_tokens`,
/// `max_output_tokens`, Gemini's `generationConfig.maxOutputTokens`, or Bedrock Converse's
/// `inferenceConfig.maxTokens`.
fn output_bound(body: &Value) -> Option<u64> {
    OUTPUT_FIELDS
        .iter()
        .find_map(|f| whole(body.get(*f)))
        .or_else(|| {
            let gen = body
                .get("generationConfig")
                .or_else(|| body.get("generation_config"))?;
            whole(
                gen.get("maxOutputTokens")
                    .or_else(|| gen.get("max_output_tokens")),
            )
        })
        // Bedrock Converse.
        .or_else(|| whole(body.get("inferenceConfig")?.get("maxTokens")))
}

/// The estimate for a parsed body (anything but an object estimates as an empty one).
pub fn estimate(body: &Value) -> Estimate {
    let mut c = Counter::default();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(0, |m| m.len() as u64);
    for f in TEXT_FIELDS {
        if let Some(v) = body.get(f) {
            c.walk(v, 0);
        }
    }
    let input =
        c.chars.div_ceil(CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages + MEDIA_TOKENS * c.media;
    let bound = output_bound(body);
    let mut output = bound.unwrap_or(DEFAULT_OUTPUT_TOKENS);
    if let Some(n) = whole(body.get("n")).filter(|n| *n > 1) {
        output = output.saturating_mul(n);
    }
    Estimate {
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        input_tokens: input.max(1),
        output_tokens: output,
        output_declared: bound.is_some(),
        stream: body.get("stream") == Some(&Value::Bool(true)),
    }
}
