//! A stream that omits its usage unless asked (OpenAI-style chat and legacy completions:
//! `stream_options.include_usage`) is asked for it when the caller did not, and the caller gets
//! the stream it would have had: the usage-only chunk dropped, the `usage` member of the other
//! chunks removed. An upstream that refuses the option (a 400 naming it) is asked again without
//! it (`conformance/stream_usage.json`). Usage a provider sends on a content chunk whether
//! asked or not stays.

use serde_json::{json, Value};
use std::borrow::Cow;

/// The body to send instead of `body` on `path` (an OpenAI-style API's path), asking for the
/// stream's usage; `None` when the caller asked already, or the call is not such a stream.
pub fn ask(path: &str, body: &Value) -> Option<Value> {
    let mut sent = body.clone();
    ask_in(path, &mut sent).then_some(sent)
}

/// [`ask`] on the body's bytes (`raw`, which parses as `body`): the bytes to send, or `None`.
/// The body sent is the caller's bytes with only the option written in (the parsed tree is
/// dropped first: a large body is held twice at most, its bytes and those sent): after the
/// opening brace when the caller wrote no `stream_options`, else inside the caller's (its
/// `include_usage` set to `true`, or the member written first), or in place of a value that is
/// no object. Members' order, numbers and spacing stay as the caller wrote them.
pub fn ask_bytes(path: &str, raw: &[u8], body: Value) -> Option<Vec<u8>> {
    let mut probe = json!({ "stream": body.get("stream").cloned().unwrap_or(Value::Null) });
    if let Some(o) = body.get("stream_options") {
        probe["stream_options"] = o.clone();
    }
    drop(body);
    if !ask_in(path, &mut probe) {
        return None;
    }
    let text = std::str::from_utf8(raw).ok()?;
    let members = members(text.as_bytes())?;
    // The last of a name is the one a parser keeps.
    let Some(options) = members.iter().rev().find(|m| m.name == "stream_options") else {
        return Some(splice(
            text,
            members.open + 1,
            members.open + 1,
            OPTION_MEMBER,
            members.is_empty(),
        ));
    };
    let (from, to) = options.value;
    match members_of(&text[from..to]) {
        Some(inner) => match inner.iter().rev().find(|m| m.name == "include_usage") {
            Some(u) => Some(splice(
                text,
                from + u.value.0,
                from + u.value.1,
                "true",
                true,
            )),
            None => {
                let at = from + inner.open + 1;
                Some(splice(
                    text,
                    at,
                    at,
                    r#""include_usage":true"#,
                    inner.is_empty(),
                ))
            }
        },
        None => Some(splice(text, from, to, r#"{"include_usage":true}"#, true)),
    }
}

const OPTION_MEMBER: &str = r#""stream_options":{"include_usage":true}"#;

/// `text` with `from..to` replaced by `with`, and a comma after it unless `alone`.
fn splice(text: &str, from: usize, to: usize, with: &str, alone: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + with.len() + 1);
    out.extend_from_slice(&text.as_bytes()[..from]);
    out.extend_from_slice(with.as_bytes());
    if !alone {
        out.push(b',');
    }
    out.extend_from_slice(&text.as_bytes()[to..]);
    out
}

/// One top-level member of an object's text: its name (unescaped) and where it lies.
struct Member {
    name: String,
    /// Where its name's quote begins.
    start: usize,
    /// Its value's bytes.
    value: (usize, usize),
    /// Where the comma after it is, if one is.
    comma: Option<usize>,
}

/// An object's top-level members, and where its opening brace is.
struct Members {
    open: usize,
    list: Vec<Member>,
}

impl std::ops::Deref for Members {
    type Target = Vec<Member>;
    fn deref(&self) -> &Vec<Member> {
        &self.list
    }
}

fn members_of(text: &str) -> Option<Members> {
    members(text.as_bytes())
}

/// The top-level members of the object `b` holds (None: not an object's text).
fn members(b: &[u8]) -> Option<Members> {
    let ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let open = ws(0);
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let mut list = Vec::new();
    let mut i = ws(open + 1);
    if b.get(i) == Some(&b'}') {
        return Some(Members { open, list });
    }
    loop {
        i = ws(i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let start = i;
        let key_end = skip_value(b, i)?;
        let name = serde_json::from_slice::<String>(&b[start..key_end]).ok()?;
        i = ws(key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value_start = ws(i + 1);
        let value_end = skip_value(b, value_start)?;
        let after = ws(value_end);
        let comma = (b.get(after) == Some(&b',')).then_some(after);
        list.push(Member {
            name,
            start,
            value: (value_start, value_end),
            comma,
        });
        match comma {
            Some(c) => i = c + 1,
            None => return (b.get(after) == Some(&b'}')).then_some(Members { open, list }),
        }
    }
}

/// [`ask`] in place: asks for the usage in `body` itself, and says whether it did.
pub fn ask_in(path: &str, body: &mut Value) -> bool {
    let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
    if !path.ends_with("/completions") || body.get("stream") != Some(&Value::Bool(true)) {
        return false;
    }
    if body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true)) {
        return false;
    }
    match body.get_mut("stream_options") {
        Some(Value::Object(o)) => {
            o.insert("include_usage".into(), Value::Bool(true));
        }
        _ => {
            body["stream_options"] = json!({"include_usage": true});
        }
    }
    true
}

/// Whether an error answer refuses the option: a 400 or 422 whose error message (or
/// parameter, or the error itself when it is a string) names `stream_options` (or
/// `include_usage`), as older Azure api-versions and some compatible servers answer. An error
/// that only echoes the request back names nothing.
pub fn refuses(status: u16, body: &Value) -> bool {
    if status != 400 && status != 422 {
        return false;
    }
    let said = [
        body.pointer("/error/message"),
        body.pointer("/error/param"),
        body.get("error"),
        body.get("message"),
        body.get("detail"),
    ];
    said.iter()
        .filter_map(|v| v.and_then(Value::as_str))
        .any(|s| s.contains("stream_options") || s.contains("include_usage"))
}

/// The caller's side of a stream whose usage was asked for on its behalf: fed the upstream's
/// bytes, it gives back the bytes of the stream the caller would have had, whole events at a
/// time.
#[derive(Default)]
pub struct Unasked {
    pending: Vec<u8>,
}

impl Unasked {
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        let mut line_start = 0;
        let mut i = 0;
        while i < self.pending.len() {
            let end = match self.pending[i] {
                b'\n' => i + 1,
                b'\r' if i + 1 < self.pending.len() => {
                    if self.pending[i + 1] == b'\n' {
                        i + 2
                    } else {
                        i + 1
                    }
                }
                // A \r last: its \n may come in the next chunk.
                b'\r' => break,
                _ => {
                    i += 1;
                    continue;
                }
            };
            // A blank line ends an event.
            if i == line_start {
                out.extend_from_slice(&event_out(&self.pending[start..end]));
                start = end;
            }
            line_start = end;
            i = end;
        }
        self.pending.drain(..start);
        out
    }

    /// The stream ended: what is left passes as it is.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// One whole event (its blank line included) as the caller gets it.
fn event_out(event: &[u8]) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(event) else {
        return Cow::Borrowed(event);
    };
    let data: Vec<&str> = text
        .split(['\n', '\r'])
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    let [data] = data[..] else {
        return Cow::Borrowed(event);
    };
    let Ok(Value::Object(chunk)) = serde_json::from_str::<Value>(data) else {
        return Cow::Borrowed(event);
    };
    let Some(usage) = chunk.get("usage") else {
        return Cow::Borrowed(event);
    };
    let no_choices = chunk
        .get("choices")
        .and_then(Value::as_array)
        .is_some_and(|c| c.is_empty());
    if no_choices && usage.is_object() {
        return Cow::Owned(Vec::new());
    }
    // Usage a provider puts on a content chunk unasked is the caller's; only the nulls the
    // option adds go.
    if !usage.is_null() {
        return Cow::Borrowed(event);
    }
    match without_member(data, "usage") {
        Some(rewritten) => Cow::Owned(text.replacen(data, &rewritten, 1).into_bytes()),
        None => Cow::Borrowed(event),
    }
}

/// `json` (an object's text) without its top-level member `key`, the rest as it was written;
/// `None` when it has no such member.
pub fn without_member(json: &str, key: &str) -> Option<String> {
    let members = members(json.as_bytes())?;
    let ws_after = |i: usize| {
        i + json.as_bytes()[i..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count()
    };
    let at = members.iter().position(|m| m.name == key)?;
    let m = &members[at];
    let (from, to) = match (m.comma, at.checked_sub(1).and_then(|p| members[p].comma)) {
        (Some(c), _) => (m.start, ws_after(c + 1)),
        (None, Some(prev)) => (prev, m.value.1),
        (None, None) => (m.start, m.value.1),
    };
    Some(format!("{}{}", &json[..from], &json[to..]))
}

/// The end of the JSON value starting at `i`.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => {
            i += 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return Some(i + 1),
                    _ => i += 1,
                }
            }
            None
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_value(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace()
            {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_goes_with_its_comma_and_the_rest_stays_as_written() {
        let cases = [
            (r#"{"a":1,"usage":null,"b":2}"#, r#"{"a":1,"b":2}"#),
            (r#"{"a":1, "usage": null}"#, r#"{"a":1}"#),
            (
                r#"{"usage":{"x":[1,"}"]},"a":"\"usage\""}"#,
                r#"{"a":"\"usage\""}"#,
            ),
            (r#"{ "usage" : null }"#, r#"{  }"#),
        ];
        for (from, to) in cases {
            assert_eq!(without_member(from, "usage").as_deref(), Some(to), "{from}");
        }
        assert_eq!(without_member(r#"{"a":{"usage":null}}"#, "usage"), None);
    }

    /// With a `stream_options` of the caller's, the body sent is the caller's bytes with only
    /// the option written in: its members' order, its numbers (past what a float holds) and its
    /// spacing as the caller wrote them.
    #[test]
    fn the_body_sent_differs_from_the_callers_only_by_the_option() {
        let path = "/v1/chat/completions";
        let cases = [
            (
                r#"{"stream":true,"seed":12345678901234567890123,"model":"m","stream_options":{"include_obfuscation":false},"z":1.10}"#,
                r#"{"stream":true,"seed":12345678901234567890123,"model":"m","stream_options":{"include_usage":true,"include_obfuscation":false},"z":1.10}"#,
            ),
            (
                r#"{ "stream": true, "stream_options": { "include_usage": false }, "n": 18446744073709551616 }"#,
                r#"{ "stream": true, "stream_options": { "include_usage": true }, "n": 18446744073709551616 }"#,
            ),
            (
                r#"{"stream":true,"stream_options":{ },"b":"é"}"#,
                r#"{"stream":true,"stream_options":{"include_usage":true },"b":"é"}"#,
            ),
            (
                r#"{"stream":true,"stream_options":null,"a":[1,{"stream_options":2}]}"#,
                r#"{"stream":true,"stream_options":{"include_usage":true},"a":[1,{"stream_options":2}]}"#,
            ),
            (
                r#"{"stream":true,"stream\u005foptions":{"x":1}}"#,
                r#"{"stream":true,"stream\u005foptions":{"include_usage":true,"x":1}}"#,
            ),
        ];
        for (raw, want) in cases {
            let body: Value = serde_json::from_str(raw).expect(raw);
            let sent = ask_bytes(path, raw.as_bytes(), body).expect(raw);
            assert_eq!(String::from_utf8(sent).expect("utf-8"), want, "{raw}");
        }
    }

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\r\n\r\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\r\n\r\ndata: [DONE]\r\n\r\n";
        let mut f = Unasked::default();
        let mut out = Vec::new();
        for b in stream.as_bytes() {
            out.extend(f.feed(std::slice::from_ref(b)));
        }
        out.extend(f.finish());
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"
        );
    }
}
