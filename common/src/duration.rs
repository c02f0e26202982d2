//! The one duration syntax, for the config, the command line, the provider's headers and the
//! fake provider's fault scripts: numbers with units, summed, as Go writes them (`250ms`, `2s`,
//! `1m30s`, `6m0s`, `1.428s`, `1h2m`), plus days (`7d`). Units: `ns`, `us` (or `µs`), `ms`, `s`,
//! `m`, `h`, `d`; spaces between the parts are allowed. Every part needs its unit.

use std::time::Duration;

/// The most a configured duration may be (about 31 years): beyond it a value is a mistake.
const MAX_SECS: f64 = 1e9;

/// Seconds in `s`, or None when it is not a duration (empty, negative, a number without a
/// unit, an unknown unit, not finite). Uncapped.
pub fn parse_secs(s: &str) -> Option<f64> {
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = rest[num_len..].trim_start();
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(rest.len());
        let secs_per_unit = match &rest[..unit_len] {
            "d" => 86_400.0,
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = rest[unit_len..].trim_start();
        total += n * secs_per_unit;
    }
    total.is_finite().then_some(total)
}

/// A duration someone wrote (config, flags): the message says how to write one.
pub fn parse(s: &str) -> Result<Duration, String> {
    match parse_secs(s) {
        Some(secs) if secs <= MAX_SECS => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "{s:?} is not a duration; write it like 250ms, 2s, 1m30s, 1h or 7d"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_units_summed() {
        let ok = |s: &str, ms: u64| assert_eq!(parse(s), Ok(Duration::from_millis(ms)), "{s:?}");
        ok("250ms", 250);
        ok("2s", 2000);
        ok("1m", 60_000);
        ok("1h", 3_600_000);
        ok("7d", 7 * 86_400_000);
        ok("1m30s", 90_000);
        ok("6m0s", 360_000);
        ok("1.5s", 1500);
        ok(" 1m 30s ", 90_000);
        assert_eq!(parse_secs("12ms"), Some(0.012));
        assert_eq!(parse_secs("1h2m"), Some(3720.0));
        assert_eq!(parse_secs("2µs"), Some(2e-6));
        assert_eq!(parse_secs("1500us"), Some(1500.0 * 1e-6));
    }

    #[test]
    fn anything_else_is_refused_with_how_to_write_it() {
        for bad in [
            "",
            "5",
            "s",
            "2 weeks",
            "-1s",
            "1x",
            "1.2.3s",
            "1e3s",
            "99999999999d",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(e.contains("write it like 250ms"), "{e}");
        }
    }
}
