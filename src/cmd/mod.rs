pub mod bench;
pub mod daemon;
pub mod lease;
pub mod status;

use crate::exit;
use llmctl_client::pb::limiter_client::LimiterClient;
use std::path::Path;
use std::process::ExitCode;
use tonic::transport::Channel;

/// Connects, or says which socket had no daemon and how to start one (exit 69).
pub async fn connect(socket: &Path) -> Result<LimiterClient<Channel>, ExitCode> {
    llmctl_client::connect(socket)
        .await
        .map_err(|e| exit::fail(exit::UNAVAILABLE, e))
}

/// Reads a duration flag: `250ms`, `2s`, `1m`, `1h`.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    llmctl_daemon::config::parse_duration(s)
}

/// Unix ms as RFC 3339 UTC with milliseconds.
pub fn rfc3339(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let ms = unix_ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(super::rfc3339(784_111_777_250), "1994-11-06T08:49:37.250Z");
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
    }
}
