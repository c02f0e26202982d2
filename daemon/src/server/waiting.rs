//! An Acquire that waits in the queue: its answer, or its refusal when max_wait passes or the
//! daemon stops, and nothing left behind when its caller goes away.

use super::convert::{answer, refused};
use super::{now, Shared};
use crate::engine::{Refusal, RefusalCode, WaiterAnswer, WaiterId};
use llmctl_proto::v1 as pb;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// A queued caller. If the call goes away (client cancelled or gone) the guard takes the
/// waiter out of the queue, or gives back a lease granted too late to be heard.
pub(super) struct Waiting {
    pub(super) shared: Arc<Shared>,
    pub(super) wid: WaiterId,
    pub(super) rx: oneshot::Receiver<WaiterAnswer>,
    pub(super) done: bool,
}

impl Waiting {
    pub(super) async fn wait(mut self, max_wait: Duration) -> pb::AcquireResponse {
        let mut stop = self.shared.stopping.clone();
        let timed_out = tokio::select! {
            res = tokio::time::timeout(max_wait, &mut self.rx) => match res {
                Ok(Ok(a)) => { self.done = true; return answer(a); }
                Ok(Err(_)) => false,
                Err(_) => true,
            },
            _ = stop.wait_for(|s| *s) => false,
        };
        self.done = true;
        let t = now();
        let mut core = self.shared.core();
        // An answer produced but not yet handed out reaches our channel first.
        core.deliver(t);
        core.waiters.remove(&self.wid);
        let refusal = if timed_out {
            core.engine.time_out(self.wid, t)
        } else {
            core.engine.cancel(self.wid, t)
        };
        core.deliver(t);
        drop(core);
        match refusal {
            Some(r) => {
                if let Some(m) = &self.shared.metrics {
                    m.not_granted(&r.key);
                }
                refused(r)
            }
            // Answered while we were timing out: the answer is already in the channel.
            None => match self.rx.try_recv() {
                Ok(a) => answer(a),
                Err(_) => refused(Refusal {
                    key: String::new(),
                    not_before_unix_ms: 0,
                    code: RefusalCode::Stopping,
                    reason: "the llmctl daemon is stopping; acquire again when it is back".into(),
                    waited: Duration::ZERO,
                }),
            },
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let t = now();
        let mut core = self.shared.core();
        core.deliver(t);
        core.waiters.remove(&self.wid);
        if core.engine.cancel(self.wid, t).is_none() {
            if let Ok(WaiterAnswer::Granted(g)) = self.rx.try_recv() {
                core.engine.abandon(&g.lease_id, t);
            }
        }
        core.deliver(t);
    }
}
