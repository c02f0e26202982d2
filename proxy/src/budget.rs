//! The request-body bytes all limited requests hold in memory together, bounded
//! (`max_body_memory` in `[proxy]`). A limited request's body is read whole (it is estimated,
//! and sent again on a retry): before a byte of it is read, the request takes room for the body
//! and for its parse; past the bound it waits for room (its upload held back by TCP until then)
//! or is answered 503 with `Retry-After`. Room is kept for small requests, so large uploads
//! filling the budget never hold back a small call.

use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// A hold of at most this size may use the whole budget; larger ones leave [`reserve`] of it
/// to small requests.
pub const SMALL: usize = 1 << 20;

/// What larger holds leave for small ones: an eighth of the budget, at most 32 MiB.
pub fn reserve(max: usize) -> usize {
    (max / 8).min(32 << 20)
}

/// What reading a JSON body into a tree holds at its peak, the body itself left out: its strings
/// (at most their bytes), a generous bound for each object (a map's node), array element and
/// object member, and the parser's scratch copy of the longest string with an escape in it.
/// Measured by a scan that allocates nothing, so a small body of many tiny objects cannot make
/// the parse take many times its size.
pub fn parse_cost(body: &[u8]) -> usize {
    const OBJECT: usize = 640;
    const ELEMENT: usize = 64;
    const MEMBER: usize = 112;
    let mut cost = 0usize;
    // Whether each open container is an object.
    let mut open: Vec<bool> = Vec::new();
    let (mut in_string, mut escaped, mut has_escape) = (false, false, false);
    let (mut string_start, mut longest_escaped) = (0usize, 0usize);
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => {
                    escaped = true;
                    has_escape = true;
                }
                (false, b'"') => {
                    in_string = false;
                    if has_escape {
                        longest_escaped = longest_escaped.max(i - string_start);
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                has_escape = false;
                string_start = i;
            }
            b'{' => {
                cost += OBJECT;
                open.push(true);
            }
            b'[' => {
                cost += ELEMENT;
                open.push(false);
            }
            b']' | b'}' => {
                open.pop();
            }
            b',' if open.last() == Some(&false) => cost += ELEMENT,
            b':' => cost += MEMBER,
            _ => {}
        }
    }
    cost.saturating_add(body.len())
        .saturating_add(longest_escaped)
}

/// The proxy's budget of body bytes.
pub struct BodyBudget {
    max: usize,
    large_max: usize,
    state: Mutex<Ledger>,
    freed: Notify,
}

#[derive(Default)]
struct Ledger {
    held: usize,
    /// Large requests waiting for room, oldest first: room goes to them in that order (small
    /// ones take the room kept for them without waiting their turn).
    queue: std::collections::VecDeque<u64>,
    next_ticket: u64,
}

/// Room taken from the budget, given back when dropped.
pub struct Hold {
    budget: Arc<BodyBudget>,
    n: usize,
}

/// Why room was not had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// More than the budget allows one request (or one large request) ever.
    TooLarge,
    /// Not within the wait (or, growing a hold, not now): the budget stayed full.
    Full,
}

impl BodyBudget {
    pub fn new(max: usize) -> Arc<BodyBudget> {
        Arc::new(BodyBudget {
            max,
            large_max: max - reserve(max),
            state: Mutex::new(Ledger::default()),
            freed: Notify::new(),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.ledger().held
    }

    /// The most all holds together may reach for a hold growing to `total`.
    fn ceiling(&self, total: usize) -> usize {
        if total <= SMALL {
            self.max
        } else {
            self.large_max
        }
    }

    /// The largest hold one request may ever have.
    pub fn most_for_one(&self) -> usize {
        self.large_max
    }

    /// Takes `n` more for a hold now at `had`, if there is room and (for a large request that
    /// waits, `ticket`) it is its turn.
    fn try_add(&self, had: usize, n: usize, ticket: Option<u64>) -> Result<(), NoRoom> {
        let total = had.saturating_add(n);
        let ceiling = self.ceiling(total);
        if total > ceiling {
            return Err(NoRoom::TooLarge);
        }
        let mut l = self.ledger();
        let turn = total <= SMALL || l.queue.front().is_none_or(|t| Some(*t) == ticket);
        if turn && l.held.saturating_add(n) <= ceiling {
            l.held += n;
            if ticket.is_some() && l.queue.front() == ticket.as_ref() {
                l.queue.pop_front();
            }
            Ok(())
        } else {
            Err(NoRoom::Full)
        }
    }

    /// Takes `n` for a new hold, waiting for room (and a large one for its turn) until
    /// `deadline`.
    async fn add(&self, n: usize, deadline: Instant) -> Result<(), NoRoom> {
        match self.try_add(0, n, None) {
            Err(NoRoom::Full) => {}
            done => return done,
        }
        let ticket = {
            let mut l = self.ledger();
            l.next_ticket += 1;
            let t = l.next_ticket;
            if n > SMALL {
                l.queue.push_back(t);
            }
            t
        };
        let got = loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match self.try_add(0, n, Some(ticket)) {
                Err(NoRoom::Full) => {}
                done => break done,
            }
            if tokio::time::timeout_at(deadline.into(), freed)
                .await
                .is_err()
            {
                break Err(NoRoom::Full);
            }
        };
        // Out of the queue whatever happened, and the next one told.
        let mut l = self.ledger();
        if let Some(at) = l.queue.iter().position(|t| *t == ticket) {
            l.queue.remove(at);
            drop(l);
            self.freed.notify_waiters();
        }
        got
    }

    fn give_back(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut l = self.ledger();
        l.held = l.held.saturating_sub(n);
        drop(l);
        self.freed.notify_waiters();
    }

    /// Room for `n` bytes, waiting for it until `deadline`. Large requests get room in the order
    /// they asked.
    pub async fn take(self: &Arc<Self>, n: usize, deadline: Instant) -> Result<Hold, NoRoom> {
        self.add(n, deadline).await?;
        Ok(Hold {
            budget: self.clone(),
            n,
        })
    }
}

impl Hold {
    pub fn bytes(&self) -> usize {
        self.n
    }

    /// `n` bytes more if there is room now. A hold never waits to grow: requests holding room
    /// while waiting for more could hold each other up until their waits ran out.
    pub fn try_grow(&mut self, n: usize) -> Result<(), NoRoom> {
        self.budget.try_add(self.n, n, None)?;
        self.n += n;
        Ok(())
    }

    /// Gives back all but `n` bytes (nothing when it holds `n` or less).
    pub fn shrink_to(&mut self, n: usize) {
        if n < self.n {
            self.budget.give_back(self.n - n);
            self.n = n;
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.budget.give_back(self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn structure_costs_more_than_its_bytes_and_strings_only_theirs() {
        let text = format!(r#"{{"messages":[{{"content":"{}"}}]}}"#, "x".repeat(1000));
        let cost = parse_cost(text.as_bytes());
        assert!(cost < text.len() + 2000, "{cost}");
        // Commas, braces and colons inside a string are text, not structure.
        let quoted = format!(r#"{{"a":"{}"}}"#, "{,:[".repeat(1000));
        assert!(parse_cost(quoted.as_bytes()) < quoted.len() + 1000);
        let escaped = r#"{"a":"\"{{{{{{{{{{"}"#;
        assert!(parse_cost(escaped.as_bytes()) < escaped.len() + 1000);
        // A long string with an escape is copied once more while it is parsed.
        let newlines = format!(r#"{{"a":"{}"}}"#, "line\\n".repeat(10_000));
        assert!(parse_cost(newlines.as_bytes()) >= 2 * newlines.len() - 100);
        // Numbers in an array: a value each, not a map's node.
        let numbers = format!("[{}]", vec!["1234"; 1000].join(","));
        let c = parse_cost(numbers.as_bytes());
        assert!(c < 16 * numbers.len() && c > 10 * numbers.len(), "{c}");
        // Tiny objects, each a map's node once parsed.
        let tiny = format!("[{}]", vec![r#"{"a":0}"#; 1000].join(","));
        assert!(parse_cost(tiny.as_bytes()) > 60 * tiny.len());
    }

    #[tokio::test]
    async fn large_holds_leave_room_for_small_ones_and_wait_for_room() {
        let budget = BodyBudget::new(64 << 20);
        let far = Instant::now() + Duration::from_secs(5);
        let large = budget.take(28 << 20, far).await.expect("room");
        let _second = budget.take(28 << 20, far).await.expect("room");
        // 56 of 64 MiB held; the reserve (8 MiB) is not for another large one...
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(budget.take(2 << 20, soon).await.err(), Some(NoRoom::Full));
        // ...but small ones fit in it.
        let small = budget.take(SMALL, soon).await.expect("a small one fits");
        assert_eq!(budget.held(), (56 << 20) + SMALL);
        drop(small);
        // A large one waiting gets in when room is given back.
        let waiter = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.take(20 << 20, far).await.map(|h| h.bytes()) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        drop(large);
        assert_eq!(waiter.await.expect("joins"), Ok(20 << 20));
        // More than one request may ever hold is refused at once.
        assert_eq!(
            budget.take(60 << 20, far).await.err(),
            Some(NoRoom::TooLarge)
        );
    }

    #[tokio::test]
    async fn large_requests_get_room_in_the_order_they_asked() {
        let budget = BodyBudget::new(64 << 20);
        let far = Instant::now() + Duration::from_secs(5);
        let first = budget.take(40 << 20, far).await.expect("room");
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.take(30 << 20, far).await.map(|h| h.bytes()) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        // A newcomer that would fit in what is left waits its turn behind the older one.
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(budget.take(10 << 20, soon).await.err(), Some(NoRoom::Full));
        // A small one does not.
        assert!(budget.take(SMALL, soon).await.is_ok());
        drop(first);
        assert_eq!(waiting.await.expect("joins"), Ok(30 << 20));
        assert!(budget.take(10 << 20, soon).await.is_ok());
    }

    #[tokio::test]
    async fn a_hold_grows_and_shrinks_and_gives_back_all_when_dropped() {
        let budget = BodyBudget::new(16 << 20);
        let far = Instant::now() + Duration::from_secs(5);
        let mut h = budget.take(1000, far).await.expect("room");
        h.try_grow(3000).expect("room");
        assert_eq!(budget.held(), 4000);
        h.shrink_to(1500);
        assert_eq!(budget.held(), 1500);
        assert_eq!(h.try_grow(64 << 20), Err(NoRoom::TooLarge));
        drop(h);
        assert_eq!(budget.held(), 0);
    }
}
