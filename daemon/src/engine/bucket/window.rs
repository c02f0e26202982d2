//! Windows that reset: an upstream that limits per fixed window (a LiteLLM proxy's virtual
//! keys, many gateways) allows its whole allowance again the moment a window begins, where a
//! continuous bucket paces the average rate. Its headers give it away: a reading whose
//! `remaining` jumped back near the most ever seen while its `reset` jumped back near the
//! window's length, once the previous reading's reset had passed. A continuous bucket never
//! shows that pair (its remaining plus its rate times the time to full is its capacity, so a
//! remaining near the top comes with a reset near zero).
//!
//! Once recognised, the bucket's level is what the window has left (lowered by every reading,
//! as any bucket's), it does not refill within a window, and it comes back whole when the
//! window the provider stated ends; a reading of a fresh window raises it to what the
//! provider says remains, less what is in flight and unreported.

use super::Bucket;
use std::time::{Duration, Instant};

/// A jump from at most this share of the most remaining ever seen...
const JUMP_FROM: f64 = 0.5;
/// ...to at least this share is a window beginning again, if...
const JUMP_TO: f64 = 0.8;
/// ...the reset jumped back to at least this share of the longest reset seen, and...
const RESET_TO: f64 = 0.6;
/// ...remaining rose by at least this many units. A small continuous bucket kept near empty
/// (another consumer of the key takes what it refills, so it is never seen full) reads 0 or 1
/// remaining, each with most of its time to full left: from 0 to 1 is no window beginning.
const MIN_JUMP: f64 = 2.0;
/// How early a window's stated end may be taken as passed (a reset read in whole seconds is
/// up to a second short, and answers take a while to come back).
const END_SLACK: Duration = Duration::from_millis(50);
/// A new window is counted from a moment this much after the provider's stated reset, so a
/// request that left before it does not arrive after it into an allowance counted twice.
const TRANSIT: Duration = Duration::from_millis(20);

/// A provider's fixed window, as its headers told it.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedWindow {
    pub length: Duration,
    /// What one window allows.
    pub allowance: f64,
    /// When the current window ends.
    pub ends: Instant,
}

impl FixedWindow {
    pub fn length_ms(&self) -> f64 {
        (self.length.as_secs_f64() * 1000.0).max(1.0)
    }
}

/// The readings a window is recognised by.
#[derive(Clone, Debug, PartialEq)]
pub struct Readings {
    remaining: f64,
    /// When the last reading said its bucket resets.
    reset_at: Instant,
    max_remaining: f64,
    max_reset: Duration,
}

impl Bucket {
    /// Takes in one reading of `remaining` and `reset` (with `in_flight` units granted and
    /// not yet reported). True when it showed a window beginning again.
    pub fn read_window(
        &mut self,
        remaining: f64,
        reset: Duration,
        granularity: Duration,
        in_flight: f64,
        now: Instant,
    ) -> bool {
        let reset_at = now + reset;
        let Some(r) = &mut self.readings else {
            self.readings = Some(Readings {
                remaining,
                reset_at,
                max_remaining: remaining,
                max_reset: reset,
            });
            return false;
        };
        let passed = now + granularity + END_SLACK >= r.reset_at;
        let was_low = r.remaining <= JUMP_FROM * r.max_remaining.max(remaining);
        r.max_remaining = r.max_remaining.max(remaining);
        r.max_reset = r.max_reset.max(reset);
        let jumped = passed
            && was_low
            && remaining >= r.remaining + MIN_JUMP
            && remaining >= JUMP_TO * r.max_remaining
            && reset >= r.max_reset.mul_f64(RESET_TO)
            && !reset.is_zero();
        r.remaining = remaining;
        r.reset_at = reset_at;
        if !jumped {
            return false;
        }
        // A reset written coarsely may be up to its granularity longer than read: the window
        // is taken to end that much later, so its allowance never comes back early.
        let (length, allowance) = (r.max_reset + granularity, r.max_remaining + 1.0);
        let window = self.window.get_or_insert(FixedWindow {
            length,
            allowance,
            ends: reset_at,
        });
        window.length = window.length.max(length);
        window.allowance = window.allowance.max(allowance);
        window.ends = reset_at + granularity + TRANSIT;
        // What the provider enforces from now on is its window: no probing of it.
        self.aimd = None;
        self.recompute();
        let fresh = (remaining - in_flight).max(0.0) * self.share;
        self.level = self.level.max(fresh.min(self.rate.capacity * self.share));
        self.updated = now;
        true
    }

    /// A window that ended gives its whole allowance back; within one, nothing comes back.
    pub(super) fn refill_window(&mut self, now: Instant) {
        let cap = self.capacity_now(now);
        if let Some(w) = &mut self.window {
            if now >= w.ends {
                let behind = now.duration_since(w.ends).as_secs_f64() / w.length.as_secs_f64();
                w.ends += w.length.mul_f64(behind.floor() + 1.0);
                self.level = self.level.max(cap);
            }
        }
        self.updated = self.updated.max(now);
        self.level = self.level.min(cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::limits::Dimension;

    /// A 5 s window of 100: readings every 50 ms while it is spent at 10 a tick.
    fn windowed(t0: Instant) -> (Bucket, Instant) {
        let mut b = Bucket::learned(Dimension::Requests, t0);
        let mut t = t0;
        for i in 0..10u32 {
            let rem = 99.0 - 10.0 * f64::from(i);
            let reset = Duration::from_millis(5000 - 50 * u64::from(i));
            assert!(!b.read_window(rem, reset, Duration::from_millis(1), 0.0, t));
            t += Duration::from_millis(50);
        }
        // Spent; the next window begins at t0 + 5 s.
        t = t0 + Duration::from_millis(5010);
        assert!(b.read_window(
            99.0,
            Duration::from_millis(4990),
            Duration::from_millis(1),
            3.0,
            t
        ));
        (b, t)
    }

    #[test]
    fn a_window_beginning_again_is_recognised_and_used() {
        let t0 = Instant::now();
        let (mut b, t) = windowed(t0);
        let w = b.window.clone().expect("window");
        assert_eq!(w.length, Duration::from_millis(5001));
        assert_eq!(w.allowance, 100.0);
        assert!(
            (b.rate.limit - 1199.76).abs() < 0.01,
            "100 per 5.001 s, per minute"
        );
        // What the provider says remains, less what is in flight.
        assert_eq!(b.level, 96.0);
        // Spent within the window: nothing comes back until it ends...
        b.level = 0.0;
        b.refill(t + Duration::from_millis(4000));
        assert_eq!(b.level, 0.0);
        assert_eq!(b.ready_at(1.0), w.ends);
        // ...then all of it.
        b.refill(w.ends + Duration::from_millis(1));
        assert_eq!(b.level, 100.0);
    }

    #[test]
    fn a_continuous_bucket_is_never_taken_for_a_window() {
        // 600/min, capacity 100: remaining + 10/s x reset = 100 at every reading, drained and
        // refilled in every pattern.
        let t0 = Instant::now();
        let mut b = Bucket::learned(Dimension::Requests, t0);
        let mut level = 100.0f64;
        let mut t = t0;
        for i in 0..2000u32 {
            let spend = f64::from((i * 7919) % 23);
            level = (level - spend).max(0.0);
            let reset = Duration::from_secs_f64((100.0 - level) / 10.0);
            assert!(
                !b.read_window(level.floor(), reset, Duration::from_millis(1), 0.0, t),
                "reading {i}"
            );
            let dt = f64::from((i * 104_729) % 900) / 1000.0;
            t += Duration::from_secs_f64(dt);
            level = (level + 10.0 * dt).min(100.0);
        }
        assert!(b.window.is_none());
    }

    #[test]
    fn a_small_bucket_another_consumer_keeps_near_empty_is_never_taken_for_a_window() {
        // A burst of 5 at 20/s, another consumer taking 30 % of it (so it refills 14/s for us
        // and is never seen full): the readings are 0, 1 or 2 remaining, each with its time to
        // full. From 0 to 1 remaining with most of the longest reset left looks like a window
        // of 2 beginning again, and held the key at 2 requests every 0.3 s.
        let t0 = Instant::now();
        let mut b = Bucket::learned(Dimension::Requests, t0);
        // Empty, full in 250 ms; 260 ms later (a cooldown), 1 left and full in 170 ms.
        assert!(!b.read_window(
            0.0,
            Duration::from_millis(250),
            Duration::from_millis(1),
            0.0,
            t0
        ));
        let t1 = t0 + Duration::from_millis(260);
        assert!(
            !b.read_window(
                1.0,
                Duration::from_millis(170),
                Duration::from_millis(1),
                0.0,
                t1
            ),
            "a window of 2 taken from a bucket of 5"
        );
        let (cap, per_s) = (3.5, 14.0);
        let mut level = 0.0f64;
        let mut t = t1;
        for i in 0..2000u32 {
            let reset = Duration::from_secs_f64((cap - level) / per_s);
            assert!(
                !b.read_window(level.floor(), reset, Duration::from_millis(1), 0.0, t),
                "reading {i}: {} remaining, reset {reset:?}",
                level.floor()
            );
            let dt = f64::from((i * 104_729) % 400) / 1000.0;
            t += Duration::from_secs_f64(dt);
            let spend = f64::from((i * 7919) % 3);
            level = ((level + per_s * dt).min(cap) - spend).max(0.0);
        }
        assert!(b.window.is_none());
    }
}
