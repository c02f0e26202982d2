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

/// What reading a JSON body into a tree costs beyond its bytes, from its structure: a generous
/// bound per object (a map's node), per array and per member or element. Strings cost at most
/// their bytes, counted in the body's share. Measured by a scan that allocates nothing, so a
/// small body of many tiny objects cannot make the parse take many times its size.
pub fn parse_cost(body: &[u8]) -> usize {
    const OBJECT: usize = 640;
    const ITEM: usize = 96;
    let (mut cost, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => cost += OBJECT,
            b'[' | b',' | b':' => cost += ITEM,
            _ => {}
        }
    }
    cost.saturating_add(body.len())
}

/// The proxy's budget of body bytes.
pub struct BodyBudget {
    max: usize,
    large_max: usize,
    held: Mutex<usize>,
    freed: Notify,
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
    /// Not within the wait: the budget stayed full.
    Full,
}

impl BodyBudget {
    pub fn new(max: usize) -> Arc<BodyBudget> {
        Arc::new(BodyBudget {
            max,
            large_max: max - reserve(max),
            held: Mutex::new(0),
            freed: Notify::new(),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        *self.held.lock().unwrap_or_else(|p| p.into_inner())
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

    /// Takes `n` more for a hold now at `had`, if there is room.
    fn try_add(&self, had: usize, n: usize) -> Result<(), NoRoom> {
        let total = had.saturating_add(n);
        if total > self.ceiling(total) {
            return Err(NoRoom::TooLarge);
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.saturating_add(n) <= self.ceiling(total) {
            *held += n;
            Ok(())
        } else {
            Err(NoRoom::Full)
        }
    }

    /// Takes `n` more for a hold now at `had`, waiting for room until `deadline`.
    async fn add(&self, had: usize, n: usize, deadline: Instant) -> Result<(), NoRoom> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match self.try_add(had, n) {
                Err(NoRoom::Full) => {}
                done => return done,
            }
            if tokio::time::timeout_at(deadline.into(), freed)
                .await
                .is_err()
            {
                return Err(NoRoom::Full);
            }
        }
    }

    fn give_back(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        *held = held.saturating_sub(n);
        drop(held);
        self.freed.notify_waiters();
    }

    /// Room for `n` bytes, waiting for it until `deadline`.
    pub async fn take(self: &Arc<Self>, n: usize, deadline: Instant) -> Result<Hold, NoRoom> {
        self.add(0, n, deadline).await?;
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

    /// `n` bytes more, waiting for room until `deadline`.
    pub async fn grow(&mut self, n: usize, deadline: Instant) -> Result<(), NoRoom> {
        self.budget.add(self.n, n, deadline).await?;
        self.n += n;
        Ok(())
    }

    /// `n` bytes more if there is room now.
    pub fn try_grow(&mut self, n: usize) -> Result<(), NoRoom> {
        self.budget.try_add(self.n, n)?;
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
    async fn a_hold_grows_and_shrinks_and_gives_back_all_when_dropped() {
        let budget = BodyBudget::new(16 << 20);
        let far = Instant::now() + Duration::from_secs(5);
        let mut h = budget.take(1000, far).await.expect("room");
        h.grow(3000, far).await.expect("room");
        assert_eq!(budget.held(), 4000);
        h.shrink_to(1500);
        assert_eq!(budget.held(), 1500);
        assert_eq!(h.try_grow(64 << 20), Err(NoRoom::TooLarge));
        drop(h);
        assert_eq!(budget.held(), 0);
    }
}
