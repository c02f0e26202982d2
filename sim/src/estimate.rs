//! Input tokens as a provider estimates them from a request body: characters / 4 over the text
//! of messages (Gemini's contents), system and prompt, plus a small overhead per message and a
//! fixed cost per image.

use serde_json::Value;

pub const PER_MESSAGE: u64 = 3;
pub const PER_IMAGE: u64 = 85;

fn text_chars(v: &Value, images: &mut u64) -> u64 {
    match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Array(parts) => parts.iter().map(|p| text_chars(p, images)).sum(),
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
            if kind.contains("image") {
                *images += 1;
                return 0;
            }
            ["text", "content", "input_text"]
                .iter()
                .filter_map(|k| o.get(*k))
                .map(|x| text_chars(x, images))
                .sum()
        }
        _ => 0,
    }
}

/// Estimated input tokens of an OpenAI or Anthropic request body.
pub fn input_tokens(body: &Value) -> u64 {
    let mut chars = 0;
    let mut images = 0;
    let mut messages = 0;
    if let Some(ms) = body.get("messages").and_then(Value::as_array) {
        for m in ms {
            messages += 1;
            chars += m.get("content").map_or(0, |c| text_chars(c, &mut images));
        }
    }
    // Gemini's turns: contents[].parts[], and its system instruction's parts.
    if let Some(cs) = body.get("contents").and_then(Value::as_array) {
        for c in cs {
            messages += 1;
            chars += c.get("parts").map_or(0, |p| text_chars(p, &mut images));
        }
    }
    if let Some(parts) = body.pointer("/systemInstruction/parts") {
        chars += text_chars(parts, &mut images);
    }
    for k in ["system", "prompt", "input", "instructions"] {
        if let Some(v) = body.get(k) {
            chars += text_chars(v, &mut images);
        }
    }
    (chars.div_ceil(4) + messages * PER_MESSAGE + images * PER_IMAGE).max(1)
}

/// The output ceiling a request asks for.
pub fn max_output_tokens(body: &Value) -> Option<u64> {
    ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .or_else(|| {
            body.pointer("/generationConfig/maxOutputTokens")
                .and_then(Value::as_u64)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_text_messages_system_and_images() {
        let b =
            json!({"messages": [{"role": "user", "content": "x".repeat(400)}], "max_tokens": 50});
        assert_eq!(input_tokens(&b), 100 + PER_MESSAGE);
        assert_eq!(max_output_tokens(&b), Some(50));
        let b = json!({
            "system": [{"type": "text", "text": "y".repeat(40)}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "z".repeat(8)},
                {"type": "image", "source": {}}
            ]}],
            "max_completion_tokens": 9
        });
        assert_eq!(input_tokens(&b), 10 + 2 + PER_MESSAGE + PER_IMAGE);
        assert_eq!(max_output_tokens(&b), Some(9));
        assert_eq!(input_tokens(&json!({})), 1);
        let b = json!({
            "contents": [{"role": "user", "parts": [{"text": "g".repeat(40)}]}],
            "systemInstruction": {"parts": [{"text": "s".repeat(8)}]},
            "generationConfig": {"maxOutputTokens": 7}
        });
        assert_eq!(input_tokens(&b), 10 + 2 + PER_MESSAGE);
        assert_eq!(max_output_tokens(&b), Some(7));
    }
}
