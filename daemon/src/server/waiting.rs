//! An Acquire that waits in the queue: its answer, or its refusal when max_wait passes or the
//! daemon stops, and nothing left behind when its caller goes away or withdraws it.

use super::convert::{answer, refused};
use super::{now, Core, Shared};
use crate::engine::{Now, Refusal, RefusalCode, WaiterAnswer, WaiterId};
use llmctl_proto::v1 as pb;
use std::collections::{HashMap, HashSet, VecDeque};
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
/// call was seen (looked up on every named Acquire: a set, with their ages in order beside it).
#[derive(Default)]
pub(crate) struct Named {
    waiting: HashMap<AcquireName, WaiterId>,
    early: HashSet<AcquireName>,
    early_order: VecDeque<(Instant, AcquireName)>,
}

impl Named {
    /// Whether `name` was withdrawn before its call came (forgotten once asked).
    pub(crate) fn withdrawn_early(&mut self, name: &AcquireName, now: Instant) -> bool {
        self.forget_old(now);
        // Its place in the order goes when it ages out (or is pushed out).
        self.early.remove(name)
    }

    pub(crate) fn waits(&mut self, name: AcquireName, wid: WaiterId) {
        self.waiting.insert(name, wid);
    }

    /// Remembers a Withdraw that found no waiting call, the oldest forgotten past the bound.
    fn withdrawn_before_seen(&mut self, name: AcquireName, now: Instant) {
        self.forget_old(now);
        if self.early_order.len() >= MAX_EARLY {
            if let Some((_, oldest)) = self.early_order.pop_front() {
                self.early.remove(&oldest);
            }
        }
        if self.early.insert(name.clone()) {
            self.early_order.push_back((now, name));
        }
    }

    fn forget_old(&mut self, now: Instant) {
        while let Some((at, _)) = self.early_order.front() {
            if now.saturating_duration_since(*at) <= EARLY_FOR {
                break;
            }
            if let Some((_, name)) = self.early_order.pop_front() {
                self.early.remove(&name);
            }
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
            self.named.withdrawn_before_seen(name, t.mono);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn name(id: &str) -> AcquireName {
        (Some(1000), id.to_string())
    }

    #[test]
    fn a_withdraw_before_its_call_refuses_the_call_once_within_its_time_and_bound() {
        let t0 = Instant::now();
        let mut n = Named::default();
        n.withdrawn_before_seen(name("a"), t0);
        assert!(
            !n.withdrawn_early(&(Some(1001), "a".into()), t0),
            "another user's id"
        );
        assert!(n.withdrawn_early(&name("a"), t0));
        assert!(!n.withdrawn_early(&name("a"), t0), "once");
        n.withdrawn_before_seen(name("b"), t0);
        assert!(!n.withdrawn_early(&name("b"), t0 + EARLY_FOR + Duration::from_millis(1)));
        for i in 0..=MAX_EARLY {
            n.withdrawn_before_seen(name(&i.to_string()), t0);
        }
        assert!(
            !n.withdrawn_early(&name("0"), t0),
            "the oldest forgotten past the bound"
        );
        assert!(n.withdrawn_early(&name(&MAX_EARLY.to_string()), t0));
        assert!(n.early.len() < MAX_EARLY && n.early_order.len() <= MAX_EARLY);
    }
}
