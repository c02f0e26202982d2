//! Plan windows: the subscription windows agent CLIs' traffic runs out of (Anthropic's unified
//! 5-hour and 7-day windows, Codex's primary and secondary windows), read from response
//! headers and refusals (docs/ARCHITECTURE.md "Plan windows" names the sources).
//!
//! - Anthropic: `anthropic-ratelimit-unified-status` (`allowed`, `allowed_warning`,
//!   `rejected`), `-unified-reset` (Unix seconds), `-unified-representative-claim` (the window
//!   that binds: `five_hour`, `seven_day`, `seven_day_opus`, ...), and per window
//!   `-unified-{5h,7d,...}-utilization` (0 to 1), `-reset` (Unix seconds), `-status`.
//! - Codex: `x-codex-{primary,secondary}-used-percent` (0 to 100), `-window-minutes`,
//!   `-reset-at` (Unix seconds) or `-reset-after-seconds`; a refusal `usage_limit_reached`
//!   whose body's `resets_at` / `resets_in_seconds` the clients write after its message as
//!   ` [resets_at=…; resets_in_seconds=…]`.
//!
//! Every value is read tolerantly: one that cannot be read, or a reset further than a window
//! lasts, is ignored.

use std::time::Duration;

/// A reset further away than this is no plan window's (the longest is 7 days).
pub const MAX_PLAN_RESET: Duration = Duration::from_secs(8 * 86_400);

/// How far a window's reset may lie past its length and still be believed: the provider's
/// clock may run ahead of this host's.
pub const CLOCK_SLACK: Duration = Duration::from_secs(300);

/// How long a closed window whose reset nobody stated is taken to last before one request
/// finds out.
pub const UNSTATED_PLAN_RESET: Duration = Duration::from_secs(3600);

/// One window as the last response said it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanWindow {
    /// `5h`, `7d`, `7d_opus`, ...: Anthropic's own, Codex's named by their length when it is
    /// given (`primary` / `secondary` otherwise).
    pub name: String,
    /// The share used, 0 to 1.
    pub used: Option<f64>,
    /// When it resets (Unix ms).
    pub resets_at_unix_ms: Option<i64>,
    /// Its length, when stated.
    pub minutes: Option<u32>,
    /// The window's own status (`allowed`, `allowed_warning`, `rejected`), when stated.
    pub status: Option<String>,
}

impl PlanWindow {
    /// "5-hour window", "7-day window", "7-day window (opus)".
    pub fn label(&self) -> String {
        label_of(&self.name)
    }

    /// How long the window lasts: the minutes it stated, else its name's (`5h`, `7d_opus`,
    /// `90m`); None for a window of no stated length.
    pub fn length(&self) -> Option<Duration> {
        self.minutes
            .map(|m| Duration::from_secs(u64::from(m) * 60))
            .or_else(|| length_of(&self.name))
    }

    /// Whether it says it is spent: rejected, or all of it used.
    fn spent(&self) -> bool {
        self.status.as_deref() == Some("rejected") || self.used.is_some_and(|u| u >= 1.0)
    }
}

/// "5h" → "5-hour window", "7d_opus" → "7-day window (opus)".
pub fn label_of(name: &str) -> String {
    let (len, model) = match name.split_once('_') {
        Some((l, m)) => (l, Some(m)),
        None => (name, None),
    };
    let digits: String = len.chars().take_while(char::is_ascii_digit).collect();
    let unit = match &len[digits.len()..] {
        "h" => Some("hour"),
        "d" => Some("day"),
        "m" => Some("minute"),
        _ => None,
    };
    let base = match unit {
        Some(u) if !digits.is_empty() => format!("{digits}-{u} window"),
        _ => format!("{len} window"),
    };
    match model {
        Some(m) => format!("{base} ({m})"),
        None => base,
    }
}

/// A window's length from its name: `5h`, `7d`, `7d_opus`, `90m`.
fn length_of(name: &str) -> Option<Duration> {
    let len = name.split('_').next().unwrap_or(name);
    let digits: String = len.chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().ok()?;
    let unit = match &len[digits.len()..] {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    Some(Duration::from_secs(n * unit)).filter(|d| !d.is_zero() && *d <= MAX_PLAN_RESET)
}

/// What a response said of the plan's windows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanSignals {
    pub windows: Vec<PlanWindow>,
    /// The plan's status as a whole (Anthropic's unified status).
    pub status: Option<String>,
    /// The window that binds (Anthropic's representative claim), by its name.
    pub binding: Option<String>,
    /// When the binding window resets (Anthropic's unified reset, Unix ms).
    pub reset_at_unix_ms: Option<i64>,
}

/// A window a refusal says is closed: which, and when it opens again.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedWindow {
    pub name: String,
    pub used: Option<f64>,
    pub resets_in: Duration,
}

impl ClosedWindow {
    pub fn label(&self) -> String {
        label_of(&self.name)
    }
}

/// Whether a header is one of the plan's (and so kept with a report).
pub fn is_plan_header(name: &str) -> bool {
    name.starts_with("anthropic-ratelimit-unified-")
        || name
            .strip_prefix("x-codex-")
            .is_some_and(|r| r.starts_with("primary-") || r.starts_with("secondary-"))
}

impl PlanSignals {
    /// Takes in one header (its name in lower case); false when it is not the plan's.
    pub fn read(&mut self, name: &str, value: &str, now_unix_ms: i64) -> bool {
        if let Some(rest) = name.strip_prefix("anthropic-ratelimit-unified-") {
            self.read_unified(rest, value, now_unix_ms);
            true
        } else if let Some(rest) = name.strip_prefix("x-codex-") {
            let Some((which, field)) = rest.split_once('-') else {
                return false;
            };
            if which != "primary" && which != "secondary" {
                return false;
            }
            self.read_codex(which, field, value, now_unix_ms);
            true
        } else {
            false
        }
    }

    fn read_unified(&mut self, rest: &str, value: &str, now: i64) {
        match rest {
            "status" => self.status = status_of(value),
            "reset" => self.reset_at_unix_ms = reset_at(value, now),
            "representative-claim" => self.binding = claim_window(value),
            _ => {
                let Some((window, field)) = rest.split_once('-') else {
                    return;
                };
                // Per-window fields only: `overage-*` and `fallback-*` are not windows.
                if !window.starts_with(|c: char| c.is_ascii_digit()) {
                    return;
                }
                let w = self.window(window);
                match field {
                    "utilization" => w.used = share(value, 1.0),
                    "reset" => w.resets_at_unix_ms = reset_at(value, now),
                    "status" => w.status = status_of(value),
                    _ => {}
                }
            }
        }
    }

    fn read_codex(&mut self, which: &str, field: &str, value: &str, now: i64) {
        let w = self.window(which);
        match field {
            "used-percent" => w.used = share(value, 100.0),
            "window-minutes" => {
                w.minutes = value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|m| (1..=(MAX_PLAN_RESET.as_secs() / 60) as u32).contains(m))
            }
            "reset-at" => w.resets_at_unix_ms = reset_at(value, now),
            "reset-after-seconds" => {
                w.resets_at_unix_ms = value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .filter(|s| *s <= MAX_PLAN_RESET.as_secs_f64())
                    .map(|s| now + (s * 1000.0) as i64)
            }
            _ => {}
        }
    }

    fn window(&mut self, name: &str) -> &mut PlanWindow {
        let pos = match self.windows.iter().position(|w| w.name == name) {
            Some(p) => p,
            None => {
                self.windows.push(PlanWindow {
                    name: name.to_string(),
                    ..PlanWindow::default()
                });
                self.windows.len() - 1
            }
        };
        &mut self.windows[pos]
    }

    /// Once every header is in: Codex's windows take the name of their length, a reset
    /// further away than its window lasts is not believed (a 5-hour window does not reopen in
    /// 7 days), and a window that says nothing is dropped.
    pub fn finish(&mut self, now_unix_ms: i64) {
        // (A few minutes' slack: the provider's clock may run ahead of this host's.)
        let beyond = |at: Option<i64>, length: Option<Duration>| match (at, length) {
            (Some(at), Some(len)) => at > now_unix_ms + (len + CLOCK_SLACK).as_millis() as i64,
            _ => false,
        };
        for w in &mut self.windows {
            if w.name == "primary" || w.name == "secondary" {
                if let Some(m) = w.minutes {
                    w.name = llmctl_common::time::window_name(u64::from(m));
                }
            }
            if beyond(w.resets_at_unix_ms, w.length()) {
                w.resets_at_unix_ms = None;
            }
        }
        let binding = self.binding_length();
        if beyond(self.reset_at_unix_ms, binding) {
            self.reset_at_unix_ms = None;
        }
        self.windows
            .retain(|w| w.used.is_some() || w.resets_at_unix_ms.is_some() || w.status.is_some());
    }

    pub fn is_empty(&self) -> bool {
        self.windows.is_empty() && self.status.is_none()
    }

    /// The binding window's length (its figures', else its name's).
    fn binding_length(&self) -> Option<Duration> {
        let name = self.binding.as_deref()?;
        self.windows
            .iter()
            .find(|w| w.name == name)
            .and_then(PlanWindow::length)
            .or_else(|| length_of(name))
    }

    /// The window a refusal closes, if it is a plan's: the plan says it is rejected, the error
    /// is Codex's `usage_limit_reached`, or a window is all used. Anthropic's "temporarily
    /// limiting requests (not your usage limit)" is a throttle, not a closed window.
    pub fn closed(
        &self,
        status: u16,
        error_type: &str,
        message: &str,
        now_unix_ms: i64,
    ) -> Option<ClosedWindow> {
        if status != 429
            || message
                .to_ascii_lowercase()
                .contains("not your usage limit")
        {
            return None;
        }
        let limit_error = error_type == "usage_limit_reached";
        let rejected = self.status.as_deref() == Some("rejected");
        let spent = self
            .windows
            .iter()
            .filter(|w| w.spent() && w.resets_at_unix_ms.is_none_or(|r| r > now_unix_ms))
            .max_by_key(|w| w.resets_at_unix_ms.unwrap_or(0));
        if !(limit_error || rejected || spent.is_some()) {
            return None;
        }
        let bound = self
            .binding
            .as_deref()
            .and_then(|b| self.windows.iter().find(|w| w.name == b));
        let window = bound.or(spent);
        let name = window
            .map(|w| w.name.clone())
            .or_else(|| self.binding.clone())
            .unwrap_or_else(|| "plan".to_string());
        let in_ms = |at: i64| Duration::from_millis((at - now_unix_ms).max(0) as u64);
        let stated = |d: Option<Duration>| d.filter(|d| !d.is_zero());
        // No window reopens later than it lasts: the longest of the one named and those spent.
        let length = window
            .into_iter()
            .chain(self.windows.iter().filter(|w| w.spent()))
            .filter_map(PlanWindow::length)
            .chain(length_of(&name))
            .max()
            .map_or(MAX_PLAN_RESET, |l| l + CLOCK_SLACK);
        let resets_in = stated(message_reset(message, now_unix_ms).map(in_ms))
            .or(stated(window.and_then(|w| w.resets_at_unix_ms).map(in_ms)))
            .or(stated(self.reset_at_unix_ms.map(in_ms)))
            .unwrap_or(UNSTATED_PLAN_RESET)
            .min(length)
            .min(MAX_PLAN_RESET);
        Some(ClosedWindow {
            name,
            used: window.and_then(|w| w.used),
            resets_in,
        })
    }
}

/// Anthropic's representative claim as a window's name: `five_hour` → `5h`,
/// `seven_day_opus` → `7d_opus`.
fn claim_window(value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    let (len, rest) = if let Some(r) = v.strip_prefix("five_hour") {
        ("5h", r)
    } else if let Some(r) = v.strip_prefix("seven_day") {
        ("7d", r)
    } else {
        return (!v.is_empty() && v.len() <= 32).then_some(v);
    };
    Some(format!("{len}{rest}"))
}

fn status_of(value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    (!v.is_empty() && v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(v)
}

/// A share written out of `full` (1 or 100), as 0 to 1; past 1.5 of it is not a reading.
fn share(value: &str, full: f64) -> Option<f64> {
    let v: f64 = value.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && v <= 1.5 * full).then_some(v / full)
}

/// A reset as Unix seconds (or an RFC 3339 time), when it is within a window of now.
fn reset_at(value: &str, now_unix_ms: i64) -> Option<i64> {
    let v = value.trim();
    let at = match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s < 1e11 => (s * 1000.0) as i64,
        Ok(_) => return None,
        Err(_) => super::delays::parse_rfc3339_ms(v)?,
    };
    let within =
        now_unix_ms - 86_400_000 <= at && at <= now_unix_ms + MAX_PLAN_RESET.as_millis() as i64;
    within.then_some(at)
}

/// The reset a refusal's message carries after it (` [resets_at=…; resets_in_seconds=…]`, as
/// the clients write Codex's body), as Unix ms.
fn message_reset(message: &str, now_unix_ms: i64) -> Option<i64> {
    let field = |name: &str| -> Option<f64> {
        let at = message.find(name)? + name.len();
        let rest = &message[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        rest[..end].parse().ok().filter(|v: &f64| v.is_finite())
    };
    field("resets_in_seconds=")
        .filter(|s| *s > 0.0 && *s <= MAX_PLAN_RESET.as_secs_f64())
        .map(|s| now_unix_ms + (s * 1000.0) as i64)
        .or_else(|| field("resets_at=").and_then(|s| reset_at(&format!("{s}"), now_unix_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_796_126_400_000; // 2026-12-01T12:00:00Z

    fn parse(headers: &[(&str, &str)]) -> PlanSignals {
        let mut p = PlanSignals::default();
        for (n, v) in headers {
            assert!(p.read(n, v, NOW), "{n} is a plan header");
        }
        p.finish(NOW);
        p
    }

    #[test]
    fn anthropic_unified_windows_are_read_with_their_reset_and_the_binding_one() {
        let reset5 = (NOW / 1000 + 3600).to_string();
        let reset7 = (NOW / 1000 + 3 * 86_400).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-status", "allowed_warning"),
            ("anthropic-ratelimit-unified-5h-utilization", "0.93"),
            ("anthropic-ratelimit-unified-5h-reset", &reset5),
            ("anthropic-ratelimit-unified-5h-status", "allowed_warning"),
            ("anthropic-ratelimit-unified-7d-utilization", "0.41"),
            ("anthropic-ratelimit-unified-7d-reset", &reset7),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour",
            ),
            ("anthropic-ratelimit-unified-reset", &reset5),
            ("anthropic-ratelimit-unified-overage-status", "rejected"),
            ("anthropic-ratelimit-unified-fallback-percentage", "0.5"),
        ]);
        assert_eq!(p.status.as_deref(), Some("allowed_warning"));
        assert_eq!(p.binding.as_deref(), Some("5h"));
        assert_eq!(
            p.windows.len(),
            2,
            "overage and fallback are not windows: {p:?}"
        );
        assert_eq!(p.windows[0].name, "5h");
        assert_eq!(p.windows[0].used, Some(0.93));
        assert_eq!(p.windows[0].resets_at_unix_ms, Some(NOW + 3_600_000));
        assert_eq!(p.windows[0].label(), "5-hour window");
        assert_eq!(p.windows[1].label(), "7-day window");
        assert_eq!(p.reset_at_unix_ms, Some(NOW + 3_600_000));
        // Allowed, even at 93 %: a success closes nothing, nor does a throttle.
        assert_eq!(p.closed(200, "", "", NOW), None);
        assert_eq!(p.closed(429, "rate_limit_error", "", NOW), None);
    }

    #[test]
    fn a_rejected_plan_closes_its_binding_window_until_its_reset() {
        let reset5 = (NOW / 1000 + 7200).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
            ("anthropic-ratelimit-unified-5h-reset", &reset5),
            ("anthropic-ratelimit-unified-7d-utilization", "0.5"),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour",
            ),
        ]);
        let c = p
            .closed(429, "rate_limit_error", "usage limit", NOW)
            .expect("closed");
        assert_eq!(c.name, "5h");
        assert_eq!(c.used, Some(1.0));
        assert_eq!(c.resets_in, Duration::from_secs(7200));
        assert_eq!(c.label(), "5-hour window");
        // The transient throttle Anthropic names as not the usage limit is a cooldown.
        let throttle = "Server is temporarily limiting requests (not your usage limit)";
        assert_eq!(p.closed(429, "rate_limit_error", throttle, NOW), None);
        // A claim on a window with no figures of its own still names it.
        let p = parse(&[
            ("anthropic-ratelimit-unified-status", "rejected"),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "seven_day_opus",
            ),
            (
                "anthropic-ratelimit-unified-reset",
                &(NOW / 1000 + 86_400).to_string(),
            ),
        ]);
        let c = p.closed(429, "", "", NOW).expect("closed");
        assert_eq!(c.name, "7d_opus");
        assert_eq!(c.label(), "7-day window (opus)");
        assert_eq!(c.resets_in, Duration::from_secs(86_400));
    }

    /// A reset further away than the window lasts is not believed: a 5-hour window cannot
    /// reopen in 7 days. Its closure lasts no longer than the window's length (its name's, or
    /// the minutes it stated), an unbelieved reset counting as none stated.
    #[test]
    fn a_reset_is_believed_only_within_its_windows_own_length() {
        let week = (NOW / 1000 + 7 * 86_400).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
            ("anthropic-ratelimit-unified-5h-reset", &week),
            ("anthropic-ratelimit-unified-reset", &week),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour",
            ),
        ]);
        assert_eq!(p.windows[0].resets_at_unix_ms, None, "not believed");
        assert_eq!(
            p.reset_at_unix_ms, None,
            "the binding window's: not believed"
        );
        let c = p.closed(429, "", "", NOW).expect("closed");
        assert_eq!(c.name, "5h");
        assert_eq!(c.resets_in, UNSTATED_PLAN_RESET);
        // A message's reset is held to the window's length too.
        let c = p
            .closed(
                429,
                "usage_limit_reached",
                "x [resets_in_seconds=600000]",
                NOW,
            )
            .expect("closed");
        assert_eq!(c.resets_in, Duration::from_secs(5 * 3600) + CLOCK_SLACK);
        // A reset a minute past the length is believed: the provider's clock may run ahead.
        let ahead = (NOW / 1000 + 5 * 3600 + 60).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
            ("anthropic-ratelimit-unified-5h-reset", &ahead),
        ]);
        assert_eq!(
            p.windows[0].resets_at_unix_ms,
            Some(NOW + (5 * 3600 + 60) * 1000)
        );
        // The binding window is the 5-hour one, but the 7-day one is spent too: its reset, 6
        // days away, holds.
        let six = (NOW / 1000 + 6 * 86_400).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-status", "rejected"),
            (
                "anthropic-ratelimit-unified-representative-claim",
                "five_hour",
            ),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
            ("anthropic-ratelimit-unified-7d-utilization", "1.0"),
            ("anthropic-ratelimit-unified-7d-reset", &six),
        ]);
        let c = p
            .closed(429, "", "x [resets_in_seconds=518400]", NOW)
            .expect("closed");
        assert_eq!(c.resets_in, Duration::from_secs(6 * 86_400));
        // The 7-day window's reset 6 days away is believed.
        let six = (NOW / 1000 + 6 * 86_400).to_string();
        let p = parse(&[
            ("anthropic-ratelimit-unified-7d-utilization", "1.0"),
            ("anthropic-ratelimit-unified-7d-reset", &six),
        ]);
        let c = p.closed(429, "", "", NOW).expect("closed");
        assert_eq!(c.resets_in, Duration::from_secs(6 * 86_400));
        // An unknown window: its stated minutes.
        let p = parse(&[
            ("x-codex-primary-used-percent", "100"),
            ("x-codex-primary-window-minutes", "90"),
            ("x-codex-primary-reset-after-seconds", "7200"),
        ]);
        assert_eq!(p.windows[0].name, "90m");
        assert_eq!(p.windows[0].resets_at_unix_ms, None);
        let c = p
            .closed(
                429,
                "usage_limit_reached",
                "x [resets_in_seconds=7200]",
                NOW,
            )
            .expect("closed");
        assert_eq!(c.resets_in, Duration::from_secs(90 * 60) + CLOCK_SLACK);
    }

    #[test]
    fn codex_windows_take_their_length_and_usage_limit_reached_its_stated_reset() {
        let p = parse(&[
            ("x-codex-primary-used-percent", "100"),
            ("x-codex-primary-window-minutes", "300"),
            ("x-codex-primary-reset-at", &(NOW / 1000 + 1800).to_string()),
            ("x-codex-secondary-used-percent", "37.5"),
            ("x-codex-secondary-window-minutes", "10080"),
            ("x-codex-secondary-reset-after-seconds", "200000"),
        ]);
        assert_eq!(p.windows[0].name, "5h");
        assert_eq!(p.windows[0].used, Some(1.0));
        assert_eq!(p.windows[1].name, "7d");
        assert_eq!(p.windows[1].used, Some(0.375));
        assert_eq!(p.windows[1].resets_at_unix_ms, Some(NOW + 200_000_000));
        // Its headers alone close the spent one.
        let c = p.closed(429, "", "", NOW).expect("closed");
        assert_eq!(
            (c.name.as_str(), c.resets_in),
            ("5h", Duration::from_secs(1800))
        );
        // The body's reset, written after the message, wins.
        let msg = "The usage limit has been reached [resets_at=1796130000; resets_in_seconds=3600]";
        let c = p
            .closed(429, "usage_limit_reached", msg, NOW)
            .expect("closed");
        assert_eq!(c.resets_in, Duration::from_secs(3600));
        // Without headers: the error alone, with its reset at.
        let none = PlanSignals::default();
        let msg = "You've hit your usage limit [resets_at=1796130000]";
        let c = none
            .closed(429, "usage_limit_reached", msg, NOW)
            .expect("closed");
        assert_eq!(
            (c.name.as_str(), c.resets_in),
            ("plan", Duration::from_secs(3600))
        );
        // Nothing stated: an hour, then one request finds out.
        let c = none
            .closed(429, "usage_limit_reached", "", NOW)
            .expect("closed");
        assert_eq!(c.resets_in, UNSTATED_PLAN_RESET);
        assert_eq!(none.closed(429, "rate_limit_exceeded", "", NOW), None);
    }

    #[test]
    fn values_no_plan_sends_are_ignored() {
        let p = parse(&[
            ("x-codex-primary-used-percent", "-3"),
            ("x-codex-primary-reset-at", "99999999999"),
            ("x-codex-secondary-used-percent", "NaN"),
            ("anthropic-ratelimit-unified-5h-utilization", "7"),
            ("anthropic-ratelimit-unified-5h-reset", "soon"),
            ("anthropic-ratelimit-unified-status", "<b>"),
        ]);
        assert!(p.is_empty(), "{p:?}");
        let mut p = PlanSignals::default();
        assert!(!p.read("x-codex-credits-balance", "3", NOW));
        assert!(!p.read("anthropic-ratelimit-requests-limit", "3", NOW));
        assert!(is_plan_header("x-codex-primary-used-percent"));
        assert!(!is_plan_header("x-codex-turn-state"));
        assert_eq!(label_of("90m"), "90-minute window");
        assert_eq!(label_of("plan"), "plan window");
    }
}
