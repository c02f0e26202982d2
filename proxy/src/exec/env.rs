//! Where `llmctl exec` points a command's base-URL variables: every variable an SDK or a
//! framework reads for an API's base URL goes to the proxy, and on from there to where the
//! command would have gone without llmctl. A variable the environment already sets keeps its
//! destination (a vLLM server, an Azure endpoint, a company gateway: its requests, and the
//! credentials meant for it, never reach another host); one that is unset follows the API's
//! main variable when that is set, else the proxy's built-in upstream.

use crate::{Api, ProxyConfig, Upstream};

/// The base-URL variables by API: the official SDKs' first, then the aliases frameworks read
/// before it (LangChain's `OPENAI_API_BASE` and `ANTHROPIC_API_URL`, LiteLLM's
/// `ANTHROPIC_API_BASE` and `GEMINI_API_BASE`, …).
pub const VARIABLES: [(Api, &[&str]); 3] = [
    (Api::OpenAi, &["OPENAI_BASE_URL", "OPENAI_API_BASE"]),
    (
        Api::Anthropic,
        &[
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_URL",
            "ANTHROPIC_API_BASE",
        ],
    ),
    (
        Api::Gemini,
        &[
            "GOOGLE_GEMINI_BASE_URL",
            "GEMINI_BASE_URL",
            "GEMINI_API_BASE",
        ],
    ),
];

/// The endpoint variables of an API served from the user's own resource (Azure OpenAI's: the
/// openai SDK's `AzureOpenAI`, LangChain's `AzureChatOpenAI`, LiteLLM's `azure/`): routed through
/// the proxy to that resource when set, left unset when not (there is no built-in one).
pub const ENDPOINTS: [(Api, &[&str]); 1] =
    [(Api::OpenAi, &["AZURE_OPENAI_ENDPOINT", "AZURE_API_BASE"])];

/// What a variable is set to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A path on the proxy (`/openai/v1`).
    Proxy(String),
    /// Left as the environment had it: it names an llmctl proxy already.
    Kept,
    /// This URL (an llmctl proxy's), as the variable it follows has it.
    Url(String),
}

/// One variable as the command gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub value: Value,
    /// What the environment had, if anything.
    pub was: Option<String>,
    /// Where its requests go from the proxy.
    pub destination: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Routes the proxy needs to destinations the environment named and no upstream serves.
    pub routes: Vec<Upstream>,
    pub settings: Vec<Setting>,
}

impl Plan {
    /// The variables' values for a proxy at `url`, and `LLMCTL_PROXY_URL`.
    pub fn env(&self, url: &str) -> Vec<(&'static str, String)> {
        let url = url.trim_end_matches('/');
        let mut out: Vec<(&'static str, String)> = self
            .settings
            .iter()
            .filter_map(|s| match &s.value {
                Value::Proxy(p) => Some((s.name, format!("{url}{p}"))),
                Value::Url(u) => Some((s.name, u.clone())),
                Value::Kept => None,
            })
            .collect();
        out.push(("LLMCTL_PROXY_URL", url.to_string()));
        out
    }
}

impl Plan {
    /// Where a request to `url` (`None`: the API's built-in upstream) goes through the proxy,
    /// for an agent CLI that reads no variable: a path on the proxy (with a route made for
    /// `url` when no upstream serves it), or `url` itself when it is under an llmctl proxy.
    pub fn route_for(
        &mut self,
        config: &ProxyConfig,
        api: Api,
        url: Option<&str>,
        proxies: &[String],
    ) -> Result<Value, String> {
        match url {
            None => Ok(built_in("", api, config).value),
            Some(u) if under_proxy(u, proxies) => Ok(Value::Kept),
            Some(u) => route_to(&mut self.routes, config, api, u).map(Value::Proxy),
        }
    }
}

/// Plans the variables for `config`'s upstreams, reading the command's environment with `env`.
/// `proxies` are URLs of llmctl proxies: a variable already pointing under one is left as it is
/// (an `exec` inside an `exec` limits each request once).
///
/// One rule for every family of variables that name one API's base URL (`VARIABLES`, and the
/// `ENDPOINTS` of resources of the user's own): when any variable of the family names a
/// destination, every variable of it that `exec` sets leads there (the first set, in the
/// family's order, for those unset; each set one keeps its own), as the SDKs and frameworks
/// that read them read them in different orders (`conformance/exec_families.json`). A family
/// nobody set gets the API's built-in upstream; an endpoint family has none, and stays unset.
pub fn plan(
    env: &dyn Fn(&str) -> Option<String>,
    config: &ProxyConfig,
    proxies: &[String],
) -> Result<Plan, String> {
    let mut plan = Plan::default();
    let families = VARIABLES
        .iter()
        .map(|(api, names)| (*api, *names, true))
        .chain(ENDPOINTS.iter().map(|(api, names)| (*api, *names, false)));
    for (api, names, has_built_in) in families {
        let set: Vec<(&'static str, String)> = names
            .iter()
            .filter_map(|n| {
                env(n)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .map(|v| (*n, v))
            })
            .collect();
        let leader = set.first().cloned();
        for name in names {
            let was = set.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            let setting = match was.clone().or_else(|| leader.clone().map(|(_, v)| v)) {
                Some(url) if under_proxy(&url, proxies) => Setting {
                    name,
                    value: match was {
                        Some(_) => Value::Kept,
                        None => Value::Url(url.clone()),
                    },
                    was,
                    destination: url,
                },
                Some(url) => {
                    let named = if was.is_some() {
                        name
                    } else {
                        leader.as_ref().map_or(name, |(n, _)| n)
                    };
                    let path = route_to(&mut plan.routes, config, api, &url)
                        .map_err(|e| format!("{named}={}: {e}", redact(&url)))?;
                    Setting {
                        name,
                        value: Value::Proxy(path),
                        was,
                        destination: url,
                    }
                }
                None if has_built_in => built_in(name, api, config),
                None => continue,
            };
            plan.settings.push(setting);
        }
    }
    Ok(plan)
}

pub use crate::config::redact_url as redact;

/// The base-URL and endpoint variables the environment sets to a URL under `proxy`.
pub fn set_under(env: &dyn Fn(&str) -> Option<String>, proxy: &str) -> Vec<&'static str> {
    VARIABLES
        .iter()
        .chain(ENDPOINTS.iter())
        .flat_map(|(_, names)| names.iter())
        .filter(|n| env(n).is_some_and(|v| is_under(&v, proxy)))
        .copied()
        .collect()
}

/// Whether `url` is under the proxy at `proxy` (its URL, or a path below it).
pub fn is_under(url: &str, proxy: &str) -> bool {
    let (url, proxy) = (
        url.trim().trim_end_matches('/'),
        proxy.trim_end_matches('/'),
    );
    !proxy.is_empty()
        && url
            .strip_prefix(proxy)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn under_proxy(url: &str, proxies: &[String]) -> bool {
    proxies.iter().any(|p| is_under(url, p))
}

/// The built-in upstream's path for a variable nobody set.
fn built_in(name: &'static str, api: Api, config: &ProxyConfig) -> Setting {
    let upstream = api.as_str();
    let url = config
        .upstreams
        .get(upstream)
        .map(|u| u.url.clone())
        .unwrap_or_default();
    // The OpenAI SDKs want the base with its /v1; an upstream whose url has it already does not.
    let path = match api {
        Api::OpenAi if !url.ends_with("/v1") => format!("/{upstream}/v1"),
        _ => format!("/{upstream}"),
    };
    Setting {
        name,
        value: Value::Proxy(path),
        was: None,
        destination: url,
    }
}

/// The proxy path that reaches `url`: under a configured upstream of the same API whose URL it
/// starts with, else under a route made for it (one per distinct URL), limited on a key named
/// after its host.
fn route_to(
    routes: &mut Vec<Upstream>,
    config: &ProxyConfig,
    api: Api,
    url: &str,
) -> Result<String, String> {
    let url = url.trim_end_matches('/');
    let configured = config
        .upstreams
        .values()
        .filter(|u| u.api == api)
        .filter_map(|u| {
            url.strip_prefix(u.url.as_str())
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                .map(|rest| (u, rest))
        })
        // The longest base that fits: the most specific upstream.
        .max_by_key(|(u, _)| u.url.len());
    if let Some((u, rest)) = configured {
        return Ok(format!("/{}{rest}", u.name));
    }
    if let Some(r) = routes.iter().find(|r| r.url == url) {
        return Ok(format!("/{}", r.name));
    }
    let authority = url
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
        .unwrap_or("");
    if authority.contains('@') {
        return Err(
            "names credentials in the URL, which the proxy would not pass on; give them as the API key (a header) and the URL without them".into(),
        );
    }
    let host = authority;
    if host.is_empty() {
        return Err(
            "is not an http(s) URL with a host; fix the variable or unset it (then the built-in upstream is used)"
                .into(),
        );
    }
    let base = format!("exec-{}", api.as_str());
    let taken = |n: &str| config.upstreams.contains_key(n) || routes.iter().any(|r| r.name == n);
    let name = (1..)
        .map(|i| {
            if i == 1 {
                base.clone()
            } else {
                format!("{base}-{i}")
            }
        })
        .find(|n| !taken(n))
        .unwrap_or(base);
    let route = Upstream::verbatim(&name, url, api, host).map_err(|e| {
        format!("{e}; fix the variable or unset it (then the built-in upstream is used)")
    })?;
    routes.push(route);
    Ok(format!("/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The plan for an environment of `vars` alone.
    fn plan_of(
        vars: &[(&str, &str)],
        config: &ProxyConfig,
        proxies: &[&str],
    ) -> Result<Plan, String> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let proxies: Vec<String> = proxies.iter().map(|p| p.to_string()).collect();
        plan(&|k| vars.get(k).cloned(), config, &proxies)
    }

    fn planned(vars: &[(&str, &str)], config: &ProxyConfig, proxies: &[&str]) -> Plan {
        plan_of(vars, config, proxies).expect("a plan")
    }

    fn value(p: &Plan, name: &str) -> String {
        p.env("http://127.0.0.1:9")
            .into_iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| format!("{name} unset"))
    }

    #[test]
    fn an_azure_endpoint_goes_through_the_proxy_to_its_resource_and_an_unset_one_stays_unset() {
        let p = planned(&[], &ProxyConfig::default(), &[]);
        assert_eq!(
            value(&p, "AZURE_OPENAI_ENDPOINT"),
            "AZURE_OPENAI_ENDPOINT unset"
        );
        let p = planned(
            &[("AZURE_OPENAI_ENDPOINT", "https://res-1.openai.azure.com/")],
            &ProxyConfig::default(),
            &[],
        );
        let path = value(&p, "AZURE_OPENAI_ENDPOINT");
        let route = p
            .routes
            .iter()
            .find(|r| path.ends_with(&format!("/{}", r.name)))
            .expect("a route for the resource");
        assert_eq!(route.url, "https://res-1.openai.azure.com");
        assert!(
            route.key.starts_with("res-1.openai.azure.com"),
            "{}",
            route.key
        );
        assert_eq!(
            value(&p, "AZURE_API_BASE"),
            path,
            "the family's other variable leads to the same resource"
        );
        // One already under a proxy is left as it is.
        let p = planned(
            &[("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:8790/azure")],
            &ProxyConfig::default(),
            &["http://127.0.0.1:8790"],
        );
        assert!(p.routes.is_empty());
        assert_eq!(
            value(&p, "AZURE_OPENAI_ENDPOINT"),
            "AZURE_OPENAI_ENDPOINT unset"
        );
    }

    /// Where a request to the variable's value reaches: through the test's proxy
    /// (`http://127.0.0.1:9`) to the upstream or route its path names, or the value itself.
    fn reaches(p: &Plan, config: &ProxyConfig, name: &str) -> String {
        let kept = p
            .settings
            .iter()
            .find(|s| s.name == name && s.value == Value::Kept);
        if let Some(s) = kept {
            // The environment's own value, left as it is.
            return s.was.clone().unwrap_or_default();
        }
        let value = value(p, name);
        if value.ends_with(" unset") {
            return "unset".into();
        }
        let Some(path) = value.strip_prefix("http://127.0.0.1:9/") else {
            return value;
        };
        let (first, rest) = path.split_once('/').map_or((path, ""), |(a, b)| (a, b));
        let upstream = p
            .routes
            .iter()
            .chain(config.upstreams.values())
            .find(|u| u.name == first)
            .unwrap_or_else(|| panic!("{name}={value}: no upstream {first}"));
        let url = if rest.is_empty() {
            upstream.url.clone()
        } else {
            format!("{}/{rest}", upstream.url)
        };
        if config.upstreams.contains_key(first) && p.routes.iter().all(|r| r.name != first) {
            // A built-in upstream: the API's own, whatever its path.
            return format!("built-in {url}");
        }
        url
    }

    #[test]
    fn each_family_leads_where_the_conformance_table_says() {
        let table: serde_json::Value =
            serde_json::from_str(include_str!("../../../conformance/exec_families.json"))
                .expect("json");
        let families: Vec<Vec<String>> = table["families"]
            .as_object()
            .expect("families")
            .values()
            .map(|v| serde_json::from_value(v.clone()).expect("names"))
            .collect();
        let ours: Vec<Vec<String>> = VARIABLES
            .iter()
            .chain(ENDPOINTS.iter())
            .map(|(_, names)| names.iter().map(|n| n.to_string()).collect())
            .collect();
        assert_eq!(
            families.iter().collect::<std::collections::BTreeSet<_>>(),
            ours.iter().collect(),
            "the table's families are exec's"
        );
        let config = ProxyConfig::default();
        let cases = table["cases"].as_array().expect("cases");
        assert!(cases.len() >= 12);
        for case in cases {
            let name = case["name"].as_str().expect("name");
            let env: BTreeMap<String, String> =
                serde_json::from_value(case["env"].clone()).expect("env");
            let vars: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let proxies: Vec<&str> = case["proxies"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            let p = planned(&vars, &config, &proxies);
            for (var, want) in case["leads"].as_object().expect("leads") {
                let want = want.as_str().expect("a destination");
                let got = reaches(&p, &config, var);
                match want {
                    "built-in" => {
                        assert!(got.starts_with("built-in "), "{name}: {var} reaches {got}")
                    }
                    _ => assert_eq!(
                        got.trim_end_matches('/'),
                        want.trim_end_matches('/'),
                        "{name}: {var}"
                    ),
                }
            }
        }
    }

    #[test]
    fn unset_variables_and_their_aliases_get_the_built_in_upstreams() {
        let p = planned(&[], &ProxyConfig::default(), &[]);
        assert!(p.routes.is_empty());
        assert_eq!(value(&p, "OPENAI_BASE_URL"), "http://127.0.0.1:9/openai/v1");
        assert_eq!(value(&p, "OPENAI_API_BASE"), "http://127.0.0.1:9/openai/v1");
        assert_eq!(
            value(&p, "ANTHROPIC_BASE_URL"),
            "http://127.0.0.1:9/anthropic"
        );
        assert_eq!(
            value(&p, "ANTHROPIC_API_URL"),
            "http://127.0.0.1:9/anthropic"
        );
        assert_eq!(
            value(&p, "ANTHROPIC_API_BASE"),
            "http://127.0.0.1:9/anthropic"
        );
        assert_eq!(value(&p, "GEMINI_API_BASE"), "http://127.0.0.1:9/gemini");
        assert_eq!(value(&p, "LLMCTL_PROXY_URL"), "http://127.0.0.1:9");
    }

    #[test]
    fn a_base_url_the_user_set_keeps_its_destination_and_its_aliases_follow_it() {
        let p = planned(
            &[("OPENAI_BASE_URL", "http://10.0.0.7:8000/v1/")],
            &ProxyConfig::default(),
            &[],
        );
        assert_eq!(p.routes.len(), 1);
        let r = &p.routes[0];
        assert_eq!(
            (r.name.as_str(), r.url.as_str(), r.key.as_str(), r.verbatim),
            (
                "exec-openai",
                "http://10.0.0.7:8000/v1",
                "10.0.0.7:8000",
                true
            )
        );
        assert_eq!(
            value(&p, "OPENAI_BASE_URL"),
            "http://127.0.0.1:9/exec-openai"
        );
        assert_eq!(
            value(&p, "OPENAI_API_BASE"),
            "http://127.0.0.1:9/exec-openai",
            "LangChain reads it first: it must go where the user's variable went"
        );
        // The other APIs are untouched by it.
        assert_eq!(
            value(&p, "ANTHROPIC_BASE_URL"),
            "http://127.0.0.1:9/anthropic"
        );
    }

    #[test]
    fn each_variable_set_keeps_its_own_destination() {
        let p = planned(
            &[
                ("ANTHROPIC_API_URL", "https://gw.example/anthropic"),
                ("ANTHROPIC_BASE_URL", "https://other.example"),
                ("OPENAI_API_BASE", "https://gw.example/openai/v1"),
            ],
            &ProxyConfig::default(),
            &[],
        );
        let names: Vec<(&str, &str, &str)> = p
            .routes
            .iter()
            .map(|r| (r.name.as_str(), r.url.as_str(), r.key.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("exec-openai", "https://gw.example/openai/v1", "gw.example"),
                ("exec-anthropic", "https://other.example", "other.example"),
                (
                    "exec-anthropic-2",
                    "https://gw.example/anthropic",
                    "gw.example"
                ),
            ]
        );
        assert_eq!(
            value(&p, "ANTHROPIC_BASE_URL"),
            "http://127.0.0.1:9/exec-anthropic"
        );
        assert_eq!(
            value(&p, "ANTHROPIC_API_URL"),
            "http://127.0.0.1:9/exec-anthropic-2"
        );
        assert_eq!(
            value(&p, "ANTHROPIC_API_BASE"),
            "http://127.0.0.1:9/exec-anthropic",
            "an unset alias follows the main variable"
        );
        assert_eq!(
            value(&p, "OPENAI_BASE_URL"),
            "http://127.0.0.1:9/exec-openai",
            "the main variable unset follows the alias set: a framework may read either first"
        );
    }

    #[test]
    fn credentials_in_a_url_are_refused_and_never_printed() {
        let e = plan_of(
            &[("OPENAI_BASE_URL", "https://user:s3cret@gw.example/v1")],
            &ProxyConfig::default(),
            &[],
        )
        .expect_err("refused");
        assert!(
            e.contains("credentials") && !e.contains("s3cret") && !e.contains("user:"),
            "{e}"
        );
        assert_eq!(
            redact("https://t0ken@gw.example/v1"),
            "https://***@gw.example/v1"
        );
        assert_eq!(redact("http://10.0.0.7:8000/v1"), "http://10.0.0.7:8000/v1");
        // A secret in the query string (as some gateways take their key) is never printed.
        let e = plan_of(
            &[("OPENAI_BASE_URL", "https://gw.example/v1?key=s3cret&team=a")],
            &ProxyConfig::default(),
            &[],
        )
        .expect_err("refused: a base URL has no query");
        assert!(e.contains("query") && !e.contains("s3cret"), "{e}");
        assert!(e.contains("key=***&team=***"), "{e}");
        let e = plan_of(
            &[("OPENAI_BASE_URL", "gw.example/v1?key=s3cret")],
            &ProxyConfig::default(),
            &[],
        )
        .expect_err("refused: no host");
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn a_destination_an_upstream_serves_goes_through_that_upstream() {
        let config = ProxyConfig::parse(
            "[proxy.upstreams.vllm]\nurl = \"http://10.0.0.7:8000\"\nkey = \"local/vllm\"\n",
            "t",
        )
        .expect("parses");
        let p = planned(
            &[
                ("OPENAI_BASE_URL", "http://10.0.0.7:8000/v1"),
                ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
            ],
            &config,
            &[],
        );
        assert!(p.routes.is_empty(), "{:?}", p.routes);
        assert_eq!(value(&p, "OPENAI_BASE_URL"), "http://127.0.0.1:9/vllm/v1");
        assert_eq!(
            value(&p, "ANTHROPIC_BASE_URL"),
            "http://127.0.0.1:9/anthropic"
        );
    }

    #[test]
    fn a_variable_already_under_a_proxy_is_left_as_it_is() {
        let p = planned(
            &[("OPENAI_BASE_URL", "http://127.0.0.1:8790/openai/v1")],
            &ProxyConfig::default(),
            &["http://127.0.0.1:8790"],
        );
        assert!(p.routes.is_empty());
        let env = p.env("http://127.0.0.1:9");
        assert!(env.iter().all(|(k, _)| *k != "OPENAI_BASE_URL"), "kept");
        assert_eq!(
            value(&p, "OPENAI_API_BASE"),
            "http://127.0.0.1:8790/openai/v1",
            "its alias follows it"
        );
    }

    #[test]
    fn a_value_that_is_no_url_is_refused_naming_the_variable() {
        let e = plan_of(
            &[("ANTHROPIC_API_URL", "not a url")],
            &ProxyConfig::default(),
            &[],
        )
        .expect_err("refused");
        assert!(e.starts_with("ANTHROPIC_API_URL=not a url: "), "{e}");
    }
}
