//! Which requests are limited: the calls that generate (chat completions, Responses, legacy
//! completions, Anthropic messages, Gemini generateContent and streamGenerateContent). Every
//! other path (models, count_tokens, files, batches) passes through unlimited.

use crate::config::Api;
use http::Method;
use llmctl_common::paths;

/// A limited call, as its path says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The model, when the path names it (Gemini's `models/M:generateContent`).
    pub model: Option<String>,
    /// The path asks for a stream (Gemini's `streamGenerateContent`).
    pub stream: bool,
}

/// The limited call `method` on `path` (the part after the upstream's name) is, if any: the
/// calls that generate, on `api`; the model and stream the path names (Azure's deployment,
/// Gemini's and Vertex AI's `models/M:method`) are read as every client reads them
/// (`conformance/paths.json`).
pub fn limited(api: Api, method: &Method, path: &str) -> Option<Call> {
    if method != Method::POST {
        return None;
    }
    let path = path.trim_end_matches('/');
    let named = paths::path_call(path);
    let call = Call {
        model: named.model,
        stream: named.stream,
    };
    let action = path.rsplit_once(':').map_or("", |(_, a)| a);
    let generates = match api {
        Api::OpenAi => ["/chat/completions", "/responses", "/completions"]
            .iter()
            .any(|s| path.ends_with(s)),
        Api::Anthropic => {
            path.ends_with("/messages")
                || (path.contains("/publishers/anthropic/models/")
                    && matches!(action, "rawPredict" | "streamRawPredict"))
        }
        Api::Gemini => matches!(action, "generateContent" | "streamGenerateContent"),
    };
    // A model resource's call names its model; without one it is no call this proxy knows.
    let named_model = !path.contains("/models/") || call.model.is_some();
    (generates && named.limited && named_model).then_some(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generating_calls_are_limited_and_the_rest_pass() {
        let post = Method::POST;
        assert!(limited(Api::OpenAi, &post, "/v1/chat/completions").is_some());
        assert!(limited(Api::OpenAi, &post, "/v1/responses").is_some());
        assert!(limited(Api::OpenAi, &Method::GET, "/v1/models").is_none());
        assert!(limited(Api::OpenAi, &post, "/v1/files").is_none());
        assert!(limited(Api::OpenAi, &post, "/v1/responses/input_tokens").is_none());
        assert_eq!(
            limited(
                Api::OpenAi,
                &post,
                "/openai/deployments/gpt-4o-prod/chat/completions"
            )
            .and_then(|c| c.model),
            Some("gpt-4o-prod".into()),
            "Azure's deployment is the model"
        );
        assert!(limited(Api::Anthropic, &post, "/v1/messages").is_some());
        assert!(limited(Api::Anthropic, &post, "/v1/messages/count_tokens").is_none());
        assert!(limited(Api::Anthropic, &post, "/v1/messages/batches").is_none());
        assert_eq!(
            limited(
                Api::Gemini,
                &post,
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
            ),
            Some(Call {
                model: Some("gemini-2.5-flash".into()),
                stream: true
            })
        );
        assert!(limited(
            Api::Gemini,
            &post,
            "/v1beta/models/gemini-2.5-flash:countTokens"
        )
        .is_none());
        assert!(limited(Api::Gemini, &post, "/v1beta/models/:generateContent").is_none());
        assert_eq!(
            limited(
                Api::Anthropic,
                &post,
                "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x@1:streamRawPredict"
            ),
            Some(Call {
                model: Some("claude-x@1".into()),
                stream: true
            }),
            "Claude on Vertex AI"
        );
        assert!(limited(
            Api::Anthropic,
            &post,
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
        )
        .is_none());
    }
}
