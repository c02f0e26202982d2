//! What a request's path says about the call (`conformance/paths.json`): clouds name the model
//! in the path, not the body (Bedrock's `/model/{id}/invoke`, Gemini's and Vertex AI's
//! `.../models/{model}:generateContent`, Azure OpenAI's `/openai/deployments/{name}/...`), some
//! paths ask for a stream, and token counting is not a call to limit.

/// The call a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathCall {
    pub limited: bool,
    /// None: the path names none (the body's model is the one).
    pub model: Option<String>,
    /// True: the path asks for a stream.
    pub stream: bool,
}

/// Bedrock runtime operations, and whether each streams.
const BEDROCK_OPS: [(&str, bool); 4] = [
    ("invoke", false),
    ("invoke-with-response-stream", true),
    ("converse", false),
    ("converse-stream", true),
];
/// Methods on a Google-style model resource that generate nothing, and Vertex AI's Claude token
/// counting, a model of its own.
const COUNTING_METHODS: [&str; 2] = ["countTokens", "computeTokens"];
const COUNTING_MODELS: [&str; 1] = ["count-tokens"];
const COUNTING_SUFFIXES: [&str; 2] = ["/count_tokens", "/responses/input_tokens"];

/// `%XX` escapes decoded; a malformed escape, or bytes that are not UTF-8, leave `s` as it is.
fn decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(v) => {
                    out.push(v);
                    i += 3;
                    continue;
                }
                None => return s.to_string(),
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// The call a request's path (without its query, as sent: still percent-encoded) names.
pub fn path_call(path: &str) -> PathCall {
    let path = path.trim_end_matches('/');
    let not_limited = PathCall {
        limited: false,
        model: None,
        stream: false,
    };
    if COUNTING_SUFFIXES.iter().any(|s| path.ends_with(s)) {
        return not_limited;
    }
    if let Some((_, rest)) = path.rsplit_once("/model/") {
        if let Some((model, op)) = rest.split_once('/') {
            if let Some((_, stream)) = BEDROCK_OPS.iter().find(|(o, _)| *o == op) {
                if !model.is_empty() {
                    return PathCall {
                        limited: true,
                        model: Some(decoded(model)),
                        stream: *stream,
                    };
                }
            }
        }
    }
    if let Some((_, rest)) = path.rsplit_once("/models/") {
        if let Some((model, method)) = rest.split_once(':').filter(|_| !rest.contains('/')) {
            if !method.is_empty() {
                let model = decoded(model);
                if COUNTING_METHODS.contains(&method) || COUNTING_MODELS.contains(&model.as_str()) {
                    return not_limited;
                }
                return PathCall {
                    limited: true,
                    model: (!model.is_empty()).then_some(model),
                    stream: method.starts_with("stream"),
                };
            }
        }
    }
    if let Some((_, rest)) = path.split_once("/openai/deployments/") {
        let deployment = rest.split('/').next().unwrap_or("");
        if !deployment.is_empty() {
            return PathCall {
                limited: true,
                model: Some(decoded(deployment)),
                stream: false,
            };
        }
    }
    PathCall {
        limited: true,
        model: None,
        stream: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_decoded_and_a_malformed_one_leaves_the_text() {
        assert_eq!(decoded("a%3Ab%2Fc"), "a:b/c");
        assert_eq!(decoded("50%"), "50%");
        assert_eq!(decoded("%zz"), "%zz");
        assert_eq!(decoded("%ff"), "%ff");
    }
}
