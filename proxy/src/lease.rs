//! A lease held by one attempt and what it is reported with: reported exactly once (by its
//! owner, or when dropped unreported), and the request counted in flight on its key for the
//! limits the proxy keeps while the daemon is away.

use crate::forward::Proxy;
use crate::rules::headers::limit_headers;
use crate::rules::usage::Usage;
use http::HeaderMap;
use llmctl_client::pb;
use std::sync::Arc;

/// A report's error message is cut to this many characters.
const MAX_ERROR_MESSAGE: usize = 2000;

/// One attempt's lease, settled exactly once: reported by its owner, or, when dropped unsettled
/// (the caller went away), at once: given back whole when its request was never sent, else
/// reported cancelled (a request made: its slot freed, its tokens at the estimate, never a
/// refusal).
pub(crate) struct LeaseGuard {
    pub(crate) proxy: Arc<Proxy>,
    pub(crate) lease_id: String,
    pub(crate) client_id: String,
    pub(crate) estimate: (u64, u64),
    pub(crate) attempt: u32,
    pub(crate) first_attempt_unix_ms: i64,
    /// Whether the request went upstream.
    pub(crate) sent: bool,
}

impl LeaseGuard {
    pub(crate) fn disarm(mut self) -> (String, String) {
        (
            std::mem::take(&mut self.lease_id),
            std::mem::take(&mut self.client_id),
        )
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        if self.lease_id.is_empty() {
            return;
        }
        let (proxy, client) = (self.proxy.clone(), std::mem::take(&mut self.client_id));
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if !self.sent {
            let lease = std::mem::take(&mut self.lease_id);
            rt.spawn(async move { proxy.limiter.withdraw(&client, lease).await });
            return;
        }
        let req = report_request(
            &self.lease_id,
            0,
            HeaderMap::new(),
            None,
            self.estimate,
            Some((
                llmctl_common::classify::CANCELLED.into(),
                "the caller went away before the upstream answered".into(),
            )),
            false,
            self.attempt,
            self.first_attempt_unix_ms,
        );
        rt.spawn(async move {
            proxy.limiter.report(&client, req).await;
        });
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn report_request(
    lease_id: &str,
    status: u16,
    headers: HeaderMap,
    usage: Option<Usage>,
    estimate: (u64, u64),
    error: Option<(String, String)>,
    stream_started: bool,
    attempt: u32,
    first_attempt_unix_ms: i64,
) -> pb::ReportRequest {
    let (error_type, error_message) = error.unwrap_or_default();
    let u = usage.unwrap_or(Usage {
        input: estimate.0,
        cached: 0,
        output: estimate.1,
    });
    pb::ReportRequest {
        lease_id: lease_id.to_string(),
        status_code: status as i32,
        headers: limit_headers(&headers),
        input_tokens: u.input as i64,
        cached_input_tokens: u.cached.min(u.input) as i64,
        output_tokens: u.output as i64,
        error_type: error_type.chars().take(256).collect(),
        error_message: error_message.chars().take(MAX_ERROR_MESSAGE).collect(),
        stream_started,
        attempt: attempt as i32,
        usage_known: usage.is_some(),
        first_attempt_unix_ms,
        answered_unix_ms: 0,
    }
}

/// A request counted in flight on its key until dropped.
pub(crate) struct InFlight {
    pub(crate) proxy: Arc<Proxy>,
    pub(crate) key: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.proxy.limiter.known.released(&self.key);
    }
}
