//! Short figures for narrow columns.

use std::time::Duration;

/// 950, 12.3k, 480k, 1.2M, 3.4G.
pub fn count(n: f64) -> String {
    let sign = if n < 0.0 { "-" } else { "" };
    let a = n.abs();
    let (v, unit) = if a >= 1e9 {
        (a / 1e9, "G")
    } else if a >= 1e6 {
        (a / 1e6, "M")
    } else if a >= 1e3 {
        (a / 1e3, "k")
    } else {
        return format!("{sign}{a:.0}");
    };
    if v < 10.0 {
        format!("{sign}{v:.1}{unit}")
    } else {
        format!("{sign}{v:.0}{unit}")
    }
}

/// A rate with one decimal below 10, whole above.
pub fn rate(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.1}")
    } else {
        count(r)
    }
}

/// 0ms, 340ms, 1.8s, 42s, 3m05s.
pub fn millis(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1_000.0)
    } else if ms < 60_000 {
        format!("{}s", ms / 1_000)
    } else {
        let s = ms / 1_000;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// How long something has run: 42s, 12m05s, 3h12m, 2d04h.
pub fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3_600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{:02}m", s / 3_600, (s % 3_600) / 60)
    } else {
        format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3_600)
    }
}

/// A share in use as a whole percentage; "-" when there is no limit.
pub fn percent(share: Option<f64>) -> String {
    match share {
        Some(s) => format!("{:.0}%", s * 100.0),
        None => "-".into(),
    }
}

/// A text bar `width` cells wide, filled to `share` (clamped to 0..=1).
pub fn bar(share: f64, width: usize) -> String {
    let filled = ((share.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

/// "minute" reads as "min" in a column.
pub fn period(p: llmctl_proto::v1::Period) -> &'static str {
    match p {
        llmctl_proto::v1::Period::Minute => "min",
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_stay_short() {
        assert_eq!(count(950.0), "950");
        assert_eq!(count(12_345.0), "12k");
        assert_eq!(count(1_234.0), "1.2k");
        assert_eq!(count(-2_000.0), "-2.0k");
        assert_eq!(count(3_400_000.0), "3.4M");
        assert_eq!(rate(0.3), "0.3");
        assert_eq!(rate(8.5), "8.5");
        assert_eq!(rate(120.0), "120");
        assert_eq!(millis(340), "340ms");
        assert_eq!(millis(1_800), "1.8s");
        assert_eq!(millis(42_000), "42s");
        assert_eq!(millis(185_000), "3m05s");
        assert_eq!(uptime(Duration::from_secs(3_723)), "1h02m");
        assert_eq!(uptime(Duration::from_secs(2 * 86_400 + 4 * 3_600)), "2d04h");
        assert_eq!(percent(Some(0.4)), "40%");
        assert_eq!(percent(Some(1.05)), "105%");
        assert_eq!(percent(None), "-");
        assert_eq!(bar(0.5, 4), "██░░");
        assert_eq!(bar(1.3, 3), "███");
        assert_eq!(bar(-0.1, 2), "░░");
    }
}
