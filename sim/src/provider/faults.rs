//! Scripted faults: `status=503,share=0.1`, `insufficient_quota`, `rate_limit,retry_after=2`,
//! `slow=5s`, `stream_error=overloaded_error,after_tokens=3`, each optionally `share=F`,
//! `count=N`, and in a script file a time window `5s..10s` before it.

use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
#[error("fault {spec:?}: {why}; write it like status=503,share=0.1 or stream_error=overloaded_error,after_tokens=3")]
pub struct FaultError {
    pub spec: String,
    pub why: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// Answer with this status in the provider's error format.
    Status(u16),
    /// 429 with `insufficient_quota`: retrying never helps.
    InsufficientQuota,
    /// A 429 rate limit whatever the buckets say, with this Retry-After if given.
    RateLimit(Option<u64>),
    /// Answer this much later (the work still counts).
    Slow(Duration),
    /// An error event of this type inside a streamed 200, after some tokens.
    StreamError {
        error_type: String,
        after_tokens: u64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub share: f64,
    /// Only the next N matching requests.
    pub remaining: Option<u64>,
    /// Active from..until, measured from the provider's start (or last reset).
    pub from: Duration,
    pub until: Option<Duration>,
}

/// A duration in the project's one syntax (`500ms`, `2s`, `1m30s`).
fn parse_dur(s: &str) -> Option<Duration> {
    llmctl_daemon::duration::parse_secs(s).map(Duration::from_secs_f64)
}

impl Fault {
    /// Parses one spec; a script line may start with a window `FROM..UNTIL` (either side empty).
    pub fn parse(line: &str) -> Result<Fault, FaultError> {
        let err = |why: &str| FaultError {
            spec: line.to_string(),
            why: why.to_string(),
        };
        let mut spec = line.trim();
        let mut from = Duration::ZERO;
        let mut until = None;
        if let Some((window, rest)) = spec.split_once(char::is_whitespace) {
            if let Some((a, b)) = window.split_once("..") {
                if !a.is_empty() {
                    from = parse_dur(a).ok_or_else(|| err("bad window start"))?;
                }
                if !b.is_empty() {
                    until = Some(parse_dur(b).ok_or_else(|| err("bad window end"))?);
                }
                spec = rest.trim();
            }
        }
        let mut items = spec.split(',').map(str::trim);
        let head = items.next().unwrap_or("");
        let (name, value) = match head.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (head, None),
        };
        let mut opts: Vec<(&str, &str)> = Vec::new();
        for item in items {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| err(&format!("option {item:?} is not key=value")))?;
            opts.push((k.trim(), v.trim()));
        }
        let opt = |k: &str| opts.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let num = |k: &str| -> Result<Option<u64>, FaultError> {
            opt(k)
                .map(|v| {
                    v.parse::<u64>()
                        .map_err(|_| err(&format!("{k}={v} is not a whole number")))
                })
                .transpose()
        };
        let kind = match (name, value) {
            ("status", Some(v)) => {
                let code: u16 = v.parse().map_err(|_| err("status needs a number"))?;
                if !(400..=599).contains(&code) {
                    return Err(err("status must be an error status, 400 to 599"));
                }
                FaultKind::Status(code)
            }
            ("insufficient_quota", None) => FaultKind::InsufficientQuota,
            ("rate_limit", None) => FaultKind::RateLimit(num("retry_after")?),
            ("slow", Some(v)) => {
                FaultKind::Slow(parse_dur(v).ok_or_else(|| err("slow needs a duration like 5s"))?)
            }
            ("stream_error", Some(t)) if !t.is_empty() => FaultKind::StreamError {
                error_type: t.to_string(),
                after_tokens: num("after_tokens")?.unwrap_or(3),
            },
            _ => return Err(err("unknown fault kind")),
        };
        let share = match opt("share") {
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|s| (0.0..=1.0).contains(s))
                .ok_or_else(|| err("share must be from 0 to 1"))?,
            None => 1.0,
        };
        let known = ["share", "count", "retry_after", "after_tokens"];
        if let Some((k, _)) = opts.iter().find(|(k, _)| !known.contains(k)) {
            return Err(err(&format!("unknown option {k:?}")));
        }
        Ok(Fault {
            kind,
            share,
            remaining: num("count")?,
            from,
            until,
        })
    }

    /// Whether it applies to a request at `elapsed`, given a uniform draw in [0, 1).
    pub fn applies(&self, elapsed: Duration, draw: f64) -> bool {
        elapsed >= self.from
            && self.until.is_none_or(|u| elapsed < u)
            && self.remaining != Some(0)
            && draw < self.share
    }
}

/// Parses a script file: one fault per line, `#` comments and blank lines ignored.
pub fn parse_script(text: &str) -> Result<Vec<Fault>, FaultError> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(Fault::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind() {
        let f = Fault::parse("status=503,share=0.25,count=4").expect("parses");
        assert_eq!(
            (f.kind, f.share, f.remaining),
            (FaultKind::Status(503), 0.25, Some(4))
        );
        assert_eq!(
            Fault::parse("insufficient_quota").expect("q").kind,
            FaultKind::InsufficientQuota
        );
        assert_eq!(
            Fault::parse("rate_limit,retry_after=2").expect("r").kind,
            FaultKind::RateLimit(Some(2))
        );
        assert_eq!(
            Fault::parse("slow=1.5s").expect("s").kind,
            FaultKind::Slow(Duration::from_millis(1500))
        );
        assert_eq!(
            Fault::parse("stream_error=overloaded_error,after_tokens=5")
                .expect("e")
                .kind,
            FaultKind::StreamError {
                error_type: "overloaded_error".into(),
                after_tokens: 5
            }
        );
        let f = Fault::parse("2s..5s status=500").expect("window");
        assert_eq!(
            (f.from, f.until),
            (Duration::from_secs(2), Some(Duration::from_secs(5)))
        );
        assert!(!f.applies(Duration::from_secs(1), 0.0));
        assert!(f.applies(Duration::from_secs(3), 0.0));
        assert!(!f.applies(Duration::from_secs(5), 0.0));
    }

    #[test]
    fn refuses_nonsense_with_the_spec_in_the_message() {
        for bad in [
            "status=200",
            "status",
            "explode",
            "slow=soon",
            "status=500,share=2",
            "status=500,colour=red",
            "status=500,count",
        ] {
            let e = Fault::parse(bad).expect_err(bad);
            assert!(e.to_string().contains(bad), "{e}");
        }
        let faults =
            parse_script("# comment\n\n0s..1s status=500 # trailing\ninsufficient_quota\n")
                .expect("script");
        assert_eq!(faults.len(), 2);
    }
}
