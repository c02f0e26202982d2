//! A client's Session stream: while it is open the client is alive; when it ends, the
//! concurrency slots of the client's leases go back.

use super::{now, Shared};
use llmctl_proto::v1 as pb;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::Status;

/// A session's stream: when the client goes, its concurrency slots go back.
pub struct SessionStream {
    pub(super) inner: ReceiverStream<Result<pb::SessionEvent, Status>>,
    pub(super) shared: Arc<Shared>,
    pub(super) client_id: String,
}

impl Stream for SessionStream {
    type Item = Result<pb::SessionEvent, Status>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

impl Drop for SessionStream {
    fn drop(&mut self) {
        let t = now();
        let mut core = self.shared.core();
        let left = match core.sessions.get_mut(&self.client_id) {
            Some(s) => {
                s.count -= 1;
                s.count
            }
            None => 0,
        };
        if left == 0 {
            core.sessions.remove(&self.client_id);
            let released = core.engine.release_client(&self.client_id, t);
            core.deliver(t);
            if released > 0 {
                tracing::info!(
                    "client {:?} went away; released {released} concurrency slot(s)",
                    self.client_id
                );
            }
        }
    }
}
