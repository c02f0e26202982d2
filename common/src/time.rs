//! Times and waits as people read them in refusals, status and events.

use std::time::Duration;

/// A Unix time in ms as `2026-12-02 18:00:00 UTC`.
pub fn utc(unix_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(unix_ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|_| format!("{unix_ms} ms"))
}

/// A wait in its two largest units: `45 s`, `12 min 5 s`, `4 h 30 min`, `2 d 3 h`.
pub fn wait(d: Duration) -> String {
    let s = d.as_secs();
    let (d_, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d_, h, m) {
        (0, 0, 0) => format!("{sec} s"),
        (0, 0, _) if sec == 0 => format!("{m} min"),
        (0, 0, _) => format!("{m} min {sec} s"),
        (0, _, 0) => format!("{h} h"),
        (0, _, _) => format!("{h} h {m} min"),
        (_, 0, _) => format!("{d_} d"),
        _ => format!("{d_} d {h} h"),
    }
}

/// A plan window's name by its length, as Anthropic writes them and Codex's lengths read:
/// 300 minutes → `5h`, 10080 → `7d`, 90 → `90m`.
pub fn window_name(minutes: u64) -> String {
    if minutes.is_multiple_of(1440) {
        format!("{}d", minutes / 1440)
    } else if minutes.is_multiple_of(60) {
        format!("{}h", minutes / 60)
    } else {
        format!("{minutes}m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_waits_read_as_written() {
        assert_eq!(utc(1_796_126_400_000), "2026-12-01 12:00:00 UTC");
        assert_eq!(wait(Duration::from_secs(45)), "45 s");
        assert_eq!(wait(Duration::from_secs(725)), "12 min 5 s");
        assert_eq!(wait(Duration::from_secs(600)), "10 min");
        assert_eq!(wait(Duration::from_secs(4 * 3600 + 1800 + 7)), "4 h 30 min");
        assert_eq!(wait(Duration::from_secs(7200)), "2 h");
        assert_eq!(wait(Duration::from_secs(2 * 86_400 + 3 * 3600)), "2 d 3 h");
        assert_eq!(wait(Duration::from_secs(86_400 + 60)), "1 d");
        assert_eq!(window_name(300), "5h");
        assert_eq!(window_name(10_080), "7d");
        assert_eq!(window_name(90), "90m");
    }
}
