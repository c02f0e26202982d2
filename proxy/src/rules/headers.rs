//! The response headers a report carries (`conformance/headers.json`): the rate-limit families
//! the daemon reads (Codex's plan windows among them) and the retry headers, nothing else.

pub const MAX_HEADERS: usize = 64;
pub const MAX_HEADER_BYTES: usize = 4096;
const PREFIXES: [&str; 4] = [
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "ratelimit",
    "x-codex-",
];
const NAMES: [&str; 4] = [
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "x-should-retry",
];

/// Whether a header (any case) is one a report carries.
pub fn is_limit_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    NAMES.contains(&name.as_str()) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The headers of `map` a report carries, names lower-cased, within the report's bounds.
pub fn limit_headers(map: &http::HeaderMap) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    for (name, value) in map {
        if out.len() >= MAX_HEADERS || !is_limit_header(name.as_str()) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes()).to_string();
        if name.as_str().len() + value.len() <= MAX_HEADER_BYTES {
            out.insert(name.as_str().to_string(), value);
        }
    }
    out
}
