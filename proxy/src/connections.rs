//! The client connections open, oldest first, with who holds each (the local uid, where the
//! kernel names it) and whether it is serving a request. At the bound (`max_connections`, and
//! `max_connections_per_uid` for one user) the oldest idle connection (of that user) is closed
//! for a new one, and a new one is refused only when none is idle. A connection with no request
//! on it is closed after `idle_timeout` (one that never sent a request, after `header_timeout`).

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::upstream::BoxError;

/// What a connection is doing: requests being served on it, and when it last was.
pub struct Activity {
    opened: Instant,
    busy: AtomicUsize,
    /// Milliseconds after `opened` its last request ended (or it opened).
    last_ms: AtomicU64,
    served: AtomicBool,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            busy: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
            served: AtomicBool::new(false),
        }
    }

    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::Relaxed) == 0
    }

    fn stamp(&self) {
        let ms = self.opened.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Resolves once the connection has had no request for its deadline: `idle` after a
    /// request, `first` before any.
    pub async fn idle_for(&self, first: Duration, idle: Duration) {
        loop {
            let limit = if self.served.load(Ordering::Relaxed) {
                idle
            } else {
                first
            };
            let since = self.opened + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            if self.is_idle() && since.elapsed() >= limit {
                return;
            }
            // A request on it now: looked at again a deadline later.
            let at = if self.is_idle() {
                since + limit
            } else {
                Instant::now() + limit
            };
            tokio::time::sleep_until(at).await;
        }
    }
}

/// A request being served on a connection, until its response has been sent (or dropped).
pub struct Busy(Arc<Activity>);

impl Busy {
    pub fn enter(activity: Arc<Activity>) -> Busy {
        activity.served.store(true, Ordering::Relaxed);
        activity.busy.fetch_add(1, Ordering::Relaxed);
        Busy(activity)
    }

    /// `resp`, its connection busy until its body is sent.
    pub fn until_sent(
        self,
        resp: http::Response<crate::upstream::Body>,
    ) -> http::Response<crate::upstream::Body> {
        let (parts, body) = resp.into_parts();
        http::Response::from_parts(
            parts,
            BusyBody {
                inner: body,
                _busy: self,
            }
            .boxed(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.stamp();
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

struct BusyBody {
    inner: crate::upstream::Body,
    _busy: Busy,
}

impl Body for BusyBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[derive(Clone)]
struct Slot {
    uid: Option<u32>,
    activity: Arc<Activity>,
    close: Arc<Notify>,
}

type Table = Arc<Mutex<BTreeMap<u64, Slot>>>;

/// The connections open.
pub struct Connections {
    max: usize,
    per_uid: usize,
    open: Table,
    next: AtomicU64,
}

/// Why a new connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `max_connections` open, every one serving a request.
    Total,
    /// `max_connections_per_uid` open by this user, every one serving a request.
    PerUid,
}

impl Refused {
    pub fn reason(self) -> &'static str {
        match self {
            Refused::Total => "connections",
            Refused::PerUid => "connections_per_uid",
        }
    }
}

/// A connection's place among those open, given up when dropped.
pub struct Open {
    id: u64,
    pub activity: Arc<Activity>,
    pub close: Arc<Notify>,
    open: Table,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

impl Connections {
    pub fn new(max: usize, per_uid: usize) -> Connections {
        Connections {
            max,
            per_uid,
            open: Default::default(),
            next: Default::default(),
        }
    }

    /// A place for a new connection from `uid`: free, or made by closing the oldest idle one
    /// (of that user, when it is the user who is at the bound).
    pub fn open(&self, uid: Option<u32>) -> Result<Open, Refused> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(u) = uid {
            let theirs = open.values().filter(|s| s.uid == Some(u)).count();
            if theirs >= self.per_uid {
                close_oldest_idle(&mut open, |s| s.uid == Some(u)).ok_or(Refused::PerUid)?;
            }
        }
        if open.len() >= self.max {
            close_oldest_idle(&mut open, |_| true).ok_or(Refused::Total)?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Slot {
            uid,
            activity: Arc::new(Activity::new()),
            close: Default::default(),
        };
        open.insert(id, slot.clone());
        Ok(Open {
            id,
            activity: slot.activity,
            close: slot.close,
            open: self.open.clone(),
        })
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Closes the oldest idle connection that `pick` takes; `None` when there is none.
fn close_oldest_idle(open: &mut BTreeMap<u64, Slot>, pick: impl Fn(&Slot) -> bool) -> Option<()> {
    let id = open
        .iter()
        .find(|(_, s)| pick(s) && s.activity.is_idle())
        .map(|(id, _)| *id)?;
    let slot = open.remove(&id)?;
    slot.close.notify_one();
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_at_their_bound_gives_way_with_their_own_oldest_idle_connection() {
        let c = Connections::new(10, 3);
        let mine: Vec<Open> = (0..3).map(|_| c.open(Some(1000)).expect("room")).collect();
        let other = c.open(Some(1001)).expect("another user has room");
        // The fourth of uid 1000 closes its oldest idle one, not the other user's.
        let _busy = Busy::enter(mine[1].activity.clone());
        let _fourth = c.open(Some(1000)).expect("room made");
        assert_eq!(c.len(), 4);
        let table = c.open.lock().expect("lock");
        assert!(!table.contains_key(&mine[0].id));
        assert!(table.contains_key(&mine[1].id) && table.contains_key(&other.id));
    }

    #[test]
    fn a_user_whose_connections_all_serve_is_refused_and_others_are_not() {
        let c = Connections::new(10, 2);
        let mine: Vec<Open> = (0..2).map(|_| c.open(Some(7)).expect("room")).collect();
        let _busy: Vec<Busy> = mine
            .iter()
            .map(|o| Busy::enter(o.activity.clone()))
            .collect();
        assert_eq!(c.open(Some(7)).err(), Some(Refused::PerUid));
        assert!(c.open(Some(8)).is_ok());
        // A peer the kernel names no user for counts in the total only.
        assert!(c.open(None).is_ok());
    }

    #[test]
    fn at_the_total_the_oldest_idle_connection_of_anyone_gives_way() {
        let c = Connections::new(2, 2);
        let a = c.open(Some(1)).expect("room");
        let b = c.open(Some(2)).expect("room");
        let _busy = Busy::enter(a.activity.clone());
        let _c = c.open(Some(3)).expect("b's closed for it");
        let table = c.open.lock().expect("lock");
        assert!(table.contains_key(&a.id) && !table.contains_key(&b.id));
        drop(table);
        let _busy_b = Busy::enter(_c.activity.clone());
        assert_eq!(c.open(Some(4)).err(), Some(Refused::Total));
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_is_closed_after_its_deadline_and_a_busy_one_is_not() {
        let a = Arc::new(Activity::new());
        let first = Duration::from_secs(10);
        let idle = Duration::from_secs(60);
        // Never a request: the header deadline.
        let t = Instant::now();
        a.idle_for(first, idle).await;
        assert_eq!(t.elapsed(), first);
        // A request for 100 s, then idle: 60 s after it ended.
        let busy = Busy::enter(a.clone());
        let watch = {
            let a = a.clone();
            tokio::spawn(async move { a.idle_for(first, idle).await })
        };
        tokio::time::sleep(Duration::from_secs(100)).await;
        assert!(!watch.is_finished());
        let ended = Instant::now();
        drop(busy);
        watch.await.expect("joins");
        let after = ended.elapsed();
        assert!(
            after >= idle && after < idle + Duration::from_secs(11),
            "{after:?}"
        );
    }
}
