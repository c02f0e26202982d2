//! Wall-clock timestamps in the two forms people and providers read.

/// Unix ms as RFC 3339 UTC with milliseconds: `2026-11-29T19:16:15.755Z`.
pub fn rfc3339(unix_ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(unix_ms) {
        Ok(t) => format!("{t:.3}"),
        // Beyond year 9999: no clock of ours; say what it was.
        Err(_) => format!("{unix_ms} ms after 1970"),
    }
}

/// Unix seconds as an IMF-fixdate HTTP-date: `Sun, 06 Nov 1994 08:49:37 GMT` (times before
/// 1970 are written as 1970).
pub fn http_date(unix_secs: i64) -> String {
    let secs = u64::try_from(unix_secs).unwrap_or(0);
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
}

/// Now, in Unix ms.
pub fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rfc3339(784_111_777_250), "1994-11-06T08:49:37.250Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
