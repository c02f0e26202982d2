//! Which requests are limited: the calls that generate (chat completions, Responses, legacy
//! completions, Anthropic messages, Gemini generateContent and streamGenerateContent). Every
//! other path (models, count_tokens, files, batches) passes through unlimited.

use crate::config::Api;
use http::Method;

/// A limited call, as its path says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The model, when the path names it (Gemini's `models/M:generateContent`).
    pub model: Option<String>,
    /// The path asks for a stream (Gemini's `streamGenerateContent`).
    pub stream: bool,
}

/// The limited call `method` on `path` (the part after the upstream's name) is, if any.
pub fn limited(api: Api, method: &Method, path: &str) -> Option<Call> {
    if method != Method::POST {
        return None;
    }
    let path = path.trim_end_matches('/');
    let plain = Call {
        model: None,
        stream: false,
    };
    match api {
        Api::OpenAi => ["/chat/completions", "/responses", "/completions"]
            .iter()
            .any(|s| path.ends_with(s))
            .then(|| Call {
                // Azure OpenAI names the deployment in the path, not a model in the body.
                model: path
                    .split_once("/deployments/")
                    .and_then(|(_, rest)| rest.split('/').next())
                    .filter(|d| !d.is_empty())
                    .map(str::to_string),
                stream: false,
            }),
        Api::Anthropic => path.ends_with("/messages").then_some(plain),
        Api::Gemini => {
            let (model, action) = path.rsplit_once("/models/")?.1.split_once(':')?;
            let stream = match action {
                "generateContent" => false,
                "streamGenerateContent" => true,
                _ => return None,
            };
            (!model.is_empty() && !model.contains('/')).then(|| Call {
                model: Some(model.to_string()),
                stream,
            })
        }
    }
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
    }
}
