//! An Acquire that waits in the queue: its answer, or its refusal when max_wait passes or the
//! daemon stops, and nothing left behind when its caller goes away or withdraws it.

use super::convert::{answer, refused};
use super::{now, Core, Shared};
use crate::engine::{Now, Refusal, RefusalCode, WaiterAnswer, WaiterId};
use llmctl_proto::v1 as pb;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// An acquire id, with the user that gave it: ids are only withdrawn by their own user.
pub(crate) type AcquireName = (Option<u32>, String);

/// How long a Withdraw that found no waiting call is remembered, so that the call, if it comes
/// after (on another stream of the caller's connection), is refused at once.
const EARLY_FOR: Duration = Duration::from_secs(30);
/// The most such Withdraws remembered (the oldest forgotten first).
const MAX_EARLY: usize = 4096;

/// Waiting Acquire calls by the id their callers gave them, and ids withdrawn before their
/// call was seen.
#[derive(Default)]
pub(crate) struct Named {
    waiting: HashMap<AcquireName, WaiterId>,
    early: VecDeque<(Instant, AcquireName)>,
}

impl Named {
    /// Whether `name` was withdrawn before its call came (forgotten once asked).
    pub(crate) fn withdrawn_early(&mut self, name: &AcquireName, now: Instant) -> bool {
        self.forget_old(now);
        match self.early.iter().position(|(_, n)| n == name) {
            Some(i) => {
                self.early.remove(i);
                true
            }
            None => false,
        }
    }

    pub(crate) fn waits(&mut self, name: AcquireName, wid: WaiterId) {
        self.waiting.insert(name, wid);
    }

    fn forget_old(&mut self, now: Instant) {
        while self
            .early
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) > EARLY_FOR)
        {
            self.early.pop_front();
        }
    }
}

impl Core {
    /// Takes the waiting call named `name` out of the queue, answering it cancelled; true when
    /// one was. A call not waiting (answered already, or not seen yet) is left as it is, and a
    /// call not seen yet is refused when it comes.
    pub(crate) fn withdraw_named(&mut self, name: AcquireName, t: Now) -> bool {
        // An answer produced but not handed out goes to its caller first.
        self.deliver(t);
        let Some(&wid) = self.named.waiting.get(&name) else {
            let named = &mut self.named;
            named.forget_old(t.mono);
            if named.early.len() >= MAX_EARLY {
                named.early.pop_front();
            }
            named.early.push_back((t.mono, name));
            return false;
        };
        if !self.waiters.contains_key(&wid) {
            // Answered: a grant it carries is the caller's to withdraw by its lease.
            return false;
        }
        let Some(refusal) = self.engine.withdraw_waiter(wid, t) else {
            return false;
        };
        if let Some(tx) = self.waiters.remove(&wid) {
            let _ = tx.send(WaiterAnswer::NotGranted(refusal));
        }
        self.deliver(t);
        true
    }
}

/// A queued caller. If the call goes away (client cancelled or gone) the guard takes the
/// waiter out of the queue, or gives back a lease granted too late to be heard.
pub(super) struct Waiting {
    pub(super) shared: Arc<Shared>,
    pub(super) wid: WaiterId,
    pub(super) rx: oneshot::Receiver<WaiterAnswer>,
    pub(super) done: bool,
    /// The id its caller gave it, to forget when it ends.
    pub(super) name: Option<AcquireName>,
}

impl Waiting {
    pub(super) async fn wait(mut self, max_wait: Duration) -> pb::AcquireResponse {
        let mut stop = self.shared.stopping.clone();
        let timed_out = tokio::select! {
            res = tokio::time::timeout(max_wait, &mut self.rx) => match res {
                Ok(Ok(a)) => {
                    self.done = true;
                    self.forget_name(&mut self.shared.core());
                    return answer(a);
                }
                Ok(Err(_)) => false,
                Err(_) => true,
            },
            _ = stop.wait_for(|s| *s) => false,
        };
        self.done = true;
        let t = now();
        let mut core = self.shared.core();
        self.forget_name(&mut core);
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

impl Waiting {
    fn forget_name(&self, core: &mut Core) {
        if let Some(name) = &self.name {
            if core.named.waiting.get(name) == Some(&self.wid) {
                core.named.waiting.remove(name);
            }
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
        self.forget_name(&mut core);
        core.deliver(t);
        core.waiters.remove(&self.wid);
        // Its call went away: the caller gave up.
        if core.engine.withdraw_waiter(self.wid, t).is_none() {
            if let Ok(WaiterAnswer::Granted(g)) = self.rx.try_recv() {
                core.engine.abandon(&g.lease_id, t);
            }
        }
        core.deliver(t);
    }
}
