//! Watching a streamed answer (server-sent events) go by untouched, to report it when it ends:
//! usage from its events (OpenAI's usage chunk, Anthropic's message_start and message_delta,
//! Responses' response.completed, Gemini's usageMetadata), the first error inside the 200, and
//! whether output had reached the caller (`conformance/usage.json`).

use super::usage::{error_info, parse_usage, Usage};
use serde_json::{Map, Value};

/// A line longer than this is not an event anyone can use: watching stops.
pub const MAX_PENDING: usize = 1 << 20;
/// A chat chunk's delta with any of these is output reaching the caller.
const OUTPUT_FIELDS: [&str; 5] = [
    "content",
    "tool_calls",
    "function_call",
    "refusal",
    "reasoning_content",
];

/// Server-sent events (the WHATWG rules) fed in byte chunks of any size.
#[derive(Default)]
pub struct EventParser {
    buf: Vec<u8>,
    event: String,
    data: Vec<String>,
    /// Complete events not taken yet: (event type, data).
    pub events: Vec<(String, String)>,
    /// Watching stopped (a line past [`MAX_PENDING`]).
    pub broken: bool,
}

impl EventParser {
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.broken {
            return;
        }
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    let line = self.buf[start..i].to_vec();
                    self.line(&line);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 == self.buf.len() {
                        break; // a \n may follow in the next chunk
                    }
                    let line = self.buf[start..i].to_vec();
                    self.line(&line);
                    i += if self.buf[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        if self.buf.len() > MAX_PENDING {
            self.broken = true;
            self.buf = Vec::new();
        }
    }

    /// The stream ended: a last line without its newline still counts, then the event ends.
    pub fn finish(&mut self) {
        if !self.buf.is_empty() {
            let mut line = std::mem::take(&mut self.buf);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&line);
        }
        self.line(b"");
    }

    fn line(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            if !self.data.is_empty() {
                let kind = if self.event.is_empty() {
                    "message".to_string()
                } else {
                    std::mem::take(&mut self.event)
                };
                self.events.push((kind, self.data.join("\n")));
            }
            self.event.clear();
            self.data.clear();
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (name, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "event" => self.event = value.to_string(),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
    }
}

/// What a finished (or broken) stream says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOutcome {
    pub usage: Option<Usage>,
    /// The first error inside the stream: (type, message); the type is "stream_error" when it
    /// names none.
    pub error: Option<(String, String)>,
    /// Output had reached the caller before that error.
    pub error_after_output: bool,
    /// Output reached the caller at all.
    pub output_seen: bool,
    /// The stream's own last event went by (`[DONE]`, Responses' `response.completed`,
    /// Anthropic's `message_stop`): what follows is only the connection's closing.
    pub finished: bool,
}

/// Follows the raw bytes of a streamed answer.
#[derive(Default)]
pub struct StreamWatcher {
    parser: EventParser,
    usage: Map<String, Value>,
    out: StreamOutcome,
}

impl StreamWatcher {
    pub fn new() -> StreamWatcher {
        StreamWatcher::default()
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.parser.feed(chunk);
        for (event, data) in std::mem::take(&mut self.parser.events) {
            self.event(&event, &data);
        }
    }

    /// Whether output has reached the caller so far.
    pub fn output_seen(&self) -> bool {
        self.out.output_seen
    }

    /// What to report: `ended` when the stream ended cleanly (a last event without its blank
    /// line still counts), false when it broke off.
    pub fn outcome(&mut self, ended: bool) -> StreamOutcome {
        if ended {
            self.parser.finish();
            for (event, data) in std::mem::take(&mut self.parser.events) {
                self.event(&event, &data);
            }
        }
        let mut out = self.out.clone();
        out.usage = parse_usage(&self.usage);
        out
    }

    fn event(&mut self, event: &str, data: &str) {
        if data.starts_with("[DONE]") {
            self.out.finished = true;
            return;
        }
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or(event);
        if matches!(kind, "response.completed" | "message_stop") {
            self.out.finished = true;
        }
        let err = if obj.get("error").is_some_and(Value::is_object) {
            Some(Value::Object(obj.clone()))
        } else if kind == "error" || event == "error" {
            Some(serde_json::json!({ "error": obj }))
        } else if kind == "response.failed" {
            let inner = obj
                .get("response")
                .and_then(|r| r.get("error"))
                .filter(|e| e.is_object())
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"code": "response_failed"}));
            Some(serde_json::json!({ "error": inner }))
        } else {
            None
        };
        if let Some(err) = err {
            if self.out.error.is_none() {
                let (etype, message) = error_info(&err).unwrap_or_default();
                let etype = if etype.is_empty() {
                    "stream_error".to_string()
                } else {
                    etype
                };
                self.out.error = Some((etype, message));
                self.out.error_after_output = self.out.output_seen;
            }
            return;
        }
        for holder in [
            Some(&obj),
            obj.get("message").and_then(Value::as_object),
            obj.get("response").and_then(Value::as_object),
        ]
        .into_iter()
        .flatten()
        {
            for name in ["usage", "usageMetadata"] {
                if let Some(u) = holder.get(name).and_then(Value::as_object) {
                    for (k, v) in u {
                        if !v.is_null() {
                            self.usage.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
        }
        if !self.out.output_seen && is_output(kind, &obj) {
            self.out.output_seen = true;
        }
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
    }
}

fn is_output(kind: &str, obj: &Map<String, Value>) -> bool {
    if kind == "content_block_delta" || (kind.starts_with("response.") && kind.ends_with(".delta"))
    {
        return true;
    }
    let chat =
        obj.get("choices")
            .and_then(Value::as_array)
            .is_some_and(|choices| {
                choices.iter().any(|ch| {
                    ch.get("delta").and_then(Value::as_object).is_some_and(|d| {
                        OUTPUT_FIELDS.iter().any(|k| d.get(*k).is_some_and(truthy))
                    }) || ch.get("text").is_some_and(truthy)
                })
            });
    let gemini = obj
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|cands| {
            cands.iter().any(|c| {
                c.pointer("/content/parts")
                    .and_then(Value::as_array)
                    .is_some_and(|parts| {
                        parts
                            .iter()
                            .any(|p| p.as_object().is_some_and(|p| !p.is_empty()))
                    })
            })
        });
    chat || gemini
}
