//! An upstream of the proxy: where its requests go, how its API reads, the key it is limited
//! on, and the checks of a name, a URL and a key prefix (with a URL as it may be printed).

use std::path::PathBuf;

/// How a provider's API reads: its bodies, usage and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Api> {
        match s {
            "openai" => Some(Api::OpenAi),
            "anthropic" => Some(Api::Anthropic),
            "gemini" => Some(Api::Gemini),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    pub name: String,
    /// Scheme, authority and an optional base path (no trailing slash).
    pub url: String,
    pub api: Api,
    /// The llmctl key prefix: a request on model M acquires on `KEY/M`.
    pub key: String,
    /// Extra root certificates (PEM) trusted for this upstream.
    pub ca: Option<PathBuf>,
    /// Paths go to it exactly as the caller wrote them (a route `llmctl exec` made to a base URL
    /// the command's environment named): no API version is added to a path without one.
    pub verbatim: bool,
}

impl Upstream {
    /// A route to `url` that `llmctl exec` makes for a base URL the command's environment
    /// already named: requests go where they would have gone, as written, limited on `key`.
    pub fn verbatim(name: &str, url: &str, api: Api, key: &str) -> Result<Upstream, String> {
        check_name(name)?;
        check_key(key)?;
        Ok(Upstream {
            name: name.to_string(),
            url: check_url(url)?,
            api,
            key: key.to_string(),
            ca: None,
            verbatim: true,
        })
    }

    /// The path to ask the upstream for, for `rest` (the caller's path after the upstream's
    /// name). The Anthropic API lives under `/v1`, and SDKs write its base URL either way (the
    /// official ones without `/v1`, the Vercel AI SDK's with it): a resource path without its
    /// version gets it, unless the upstream's URL ends in it already. The same for OpenAI's own
    /// API (`/chat/completions` is `/v1/chat/completions` there).
    pub fn path_for<'a>(&self, rest: &'a str) -> std::borrow::Cow<'a, str> {
        use std::borrow::Cow;
        if self.verbatim || self.url.ends_with("/v1") {
            return Cow::Borrowed(rest);
        }
        let resources: &[&str] = match self.api {
            Api::Anthropic => &["messages", "complete", "models", "files"],
            // Only OpenAI's own API: a server of another's (Perplexity serves
            // /chat/completions at its root; Azure has its /openai/deployments/…) keeps its
            // own layout.
            Api::OpenAi if self.url == OPENAI_URL => &[
                "chat/completions",
                "responses",
                "completions",
                "embeddings",
                "models",
                "files",
                "batches",
                "uploads",
                "audio",
                "images",
                "moderations",
            ],
            _ => &[],
        };
        let bare = rest.strip_prefix('/').unwrap_or(rest);
        let unversioned = resources.iter().any(|r| {
            bare.strip_prefix(r)
                .is_some_and(|after| after.is_empty() || after.starts_with('/'))
        });
        if unversioned {
            Cow::Owned(format!("/v1{rest}"))
        } else {
            Cow::Borrowed(rest)
        }
    }
}

/// The built-in `openai` upstream's URL.
const OPENAI_URL: &str = "https://api.openai.com";

/// The upstreams the proxy has without a config: each API's own.
pub(super) const BUILT_IN: [(&str, &str, Api); 3] = [
    ("openai", OPENAI_URL, Api::OpenAi),
    ("anthropic", "https://api.anthropic.com", Api::Anthropic),
    (
        "gemini",
        "https://generativelanguage.googleapis.com",
        Api::Gemini,
    ),
];

pub(super) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && !name.starts_with('_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} cannot name an upstream (it is the first part of the proxy's paths); use letters, digits, '-', '_' and '.', not starting with '_'"
        ))
    }
}

/// A URL as it may be printed: the credentials in its user part and the values of its query
/// (some gateways take their key there) masked.
pub fn redact_url(url: &str) -> String {
    let (url, fragment) = url
        .split_once('#')
        .map_or((url, None), |(u, f)| (u, Some(f)));
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split('/').next().unwrap_or("");
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}{}", &rest[authority.len()..]),
                None => base.to_string(),
            }
        }
        None => base.to_string(),
    };
    if let Some(q) = query {
        let masked: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) => format!("{k}=***"),
                None if pair.is_empty() => String::new(),
                None => "***".to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&masked.join("&"));
    }
    if fragment.is_some() {
        out.push_str("#***");
    }
    out
}

pub(super) fn check_url(url: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!(
            "{:?} {why}; write it like \"http://10.0.0.7:8000\" or \"https://api.example.com/v1\"",
            redact_url(url)
        )
    };
    let uri: http::Uri = url.parse().map_err(|_| bad("is not a URL"))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return Err(bad("is not an http or https URL")),
    }
    if uri.authority().is_none() {
        return Err(bad("names no host"));
    }
    if uri.query().is_some() {
        return Err(bad("has a query; give the base only"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

pub(super) fn check_key(key: &str) -> Result<(), String> {
    let ok = !key.is_empty()
        && !key.starts_with('/')
        && !key.ends_with('/')
        && !key.contains("//")
        && !key.chars().any(char::is_whitespace)
        && key.len() <= 200;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{key:?} is not a key prefix; write names joined by '/', like \"local/vllm\" (the request's model is appended)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProxyConfig;

    #[test]
    fn a_path_without_its_api_version_gets_it_where_the_api_has_one() {
        let c = ProxyConfig::default();
        let (oa, an, ge) = (
            &c.upstreams["openai"],
            &c.upstreams["anthropic"],
            &c.upstreams["gemini"],
        );
        // The Vercel AI SDK writes Anthropic's base with /v1, the official SDKs without.
        assert_eq!(an.path_for("/messages"), "/v1/messages");
        assert_eq!(an.path_for("/v1/messages"), "/v1/messages");
        assert_eq!(
            an.path_for("/messages/count_tokens"),
            "/v1/messages/count_tokens"
        );
        assert_eq!(an.path_for("/messagesx"), "/messagesx");
        assert_eq!(oa.path_for("/chat/completions"), "/v1/chat/completions");
        assert_eq!(oa.path_for("/v1/responses"), "/v1/responses");
        assert_eq!(
            ge.path_for("/v1beta/models/g:generateContent"),
            "/v1beta/models/g:generateContent"
        );
        // Another's server keeps its layout (Perplexity's /chat/completions at its root,
        // Azure's deployments, a gateway's prefix).
        let others = ProxyConfig::parse(
            "[proxy.upstreams.pplx]\nurl = \"https://api.perplexity.ai\"\n[proxy.upstreams.azure]\nurl = \"https://r.openai.azure.com/openai\"\n",
            "t",
        )
        .expect("parses");
        for name in ["pplx", "azure"] {
            assert_eq!(
                others.upstreams[name].path_for("/chat/completions"),
                "/chat/completions"
            );
        }
        // A route exec made to the user's own base URL goes exactly as written.
        let mine = Upstream::verbatim(
            "exec-anthropic",
            "http://10.0.0.7:9000",
            Api::Anthropic,
            "10.0.0.7:9000",
        )
        .expect("a route");
        assert_eq!(mine.path_for("/messages"), "/messages");
        let v1 = Upstream::verbatim("x", "http://h/v1", Api::Anthropic, "h").expect("a route");
        assert!(!v1.path_for("/messages").starts_with("/v1/v1"));
    }
}
