//! The provider side of a limit: a continuous-refill bucket per dimension.

use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Bucket {
    pub per_minute: f64,
    pub capacity: f64,
    pub level: f64,
    updated: Instant,
    /// The share of each refill another consumer of the key takes before anyone here can.
    pub external_share: f64,
    /// Fixed windows of this length instead of continuous refill: the whole capacity comes
    /// back when a window begins (a LiteLLM proxy's virtual keys).
    pub window: Option<Duration>,
    window_start: Instant,
}

impl Bucket {
    /// A full bucket: a provider's quota at the start of a run.
    pub fn full(per_minute: f64, capacity: f64, now: Instant) -> Bucket {
        Bucket {
            per_minute,
            capacity,
            level: capacity,
            updated: now,
            external_share: 0.0,
            window: None,
            window_start: now,
        }
    }

    /// Fixed windows of `length`, each allowing `capacity`, the first beginning at `now`.
    pub fn windowed(per_minute: f64, length: Duration, now: Instant) -> Bucket {
        let capacity = (per_minute * length.as_secs_f64() / 60.0).max(1.0).floor();
        let mut b = Bucket::full(per_minute, capacity, now);
        b.window = Some(length);
        b
    }

    /// Fixed windows begin with the first request after a reset, as a proxy's do for a key
    /// that was idle.
    pub fn begin_window(&mut self, now: Instant) {
        if self.window.is_some() {
            self.window_start = now;
            self.updated = now;
            self.level = self.capacity * (1.0 - self.external_share);
        }
    }

    /// Every limit times `factor` from now on (a provider changing a tier mid-run).
    pub fn scale(&mut self, factor: f64) {
        self.per_minute *= factor;
        self.capacity = (self.capacity * factor).max(1.0);
        self.level = self.level.min(self.capacity);
    }

    fn per_sec(&self) -> f64 {
        self.per_minute / 60.0
    }

    /// What is left of the refill for this key's own clients.
    fn own_per_sec(&self) -> f64 {
        self.per_sec() * (1.0 - self.external_share)
    }

    pub fn refill(&mut self, now: Instant) {
        if let Some(w) = self.window {
            if now >= self.window_start + w {
                let behind = now.duration_since(self.window_start).as_secs_f64() / w.as_secs_f64();
                self.window_start += w.mul_f64(behind.floor());
                self.level = self.capacity * (1.0 - self.external_share);
            }
            self.updated = now;
            return;
        }
        if now > self.updated {
            let add = now.duration_since(self.updated).as_secs_f64() * self.own_per_sec();
            self.level = (self.level + add).min(self.capacity);
            self.updated = now;
        }
    }

    /// How long until `need` units are there for this key's own clients.
    pub fn wait_for(&self, need: f64) -> Duration {
        if self.level >= need {
            Duration::ZERO
        } else if let Some(w) = self.window {
            (self.window_start + w).saturating_duration_since(self.updated)
        } else {
            Duration::from_secs_f64(((need - self.level) / self.own_per_sec()).min(86_400.0))
        }
    }

    /// How long until the bucket is full again, as a provider says it in its reset headers:
    /// at the full refill rate, knowing nothing of who will spend what meanwhile.
    pub fn until_full(&self) -> Duration {
        if let Some(w) = self.window {
            // A window's reset is when it begins again, however much is left.
            return (self.window_start + w).saturating_duration_since(self.updated);
        }
        if self.level >= self.capacity {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(((self.capacity - self.level) / self.per_sec()).min(86_400.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_window_comes_back_whole_when_it_begins_again() {
        let t = Instant::now();
        let mut b = Bucket::windowed(1200.0, Duration::from_secs(5), t);
        assert_eq!(b.capacity, 100.0);
        b.level = 0.0;
        b.refill(t + Duration::from_millis(4999));
        assert_eq!(b.level, 0.0);
        assert_eq!(b.until_full(), Duration::from_millis(1));
        b.refill(t + Duration::from_millis(5001));
        assert_eq!(b.level, 100.0);
        assert_eq!(b.until_full(), Duration::from_millis(4999));
    }

    #[test]
    fn refills_continuously_up_to_capacity() {
        let t = Instant::now();
        let mut b = Bucket::full(600.0, 10.0, t);
        b.level = 0.0;
        b.refill(t + Duration::from_millis(250));
        assert!((b.level - 2.5).abs() < 1e-9);
        assert_eq!(b.wait_for(3.5), Duration::from_millis(100));
        b.refill(t + Duration::from_secs(60));
        assert_eq!(b.level, 10.0);
        assert_eq!(b.until_full(), Duration::ZERO);
    }

    #[test]
    fn another_consumer_takes_its_share_of_the_refill() {
        let t = Instant::now();
        let mut b = Bucket::full(600.0, 10.0, t);
        b.external_share = 0.3;
        b.level = 0.0;
        b.refill(t + Duration::from_secs(1));
        assert!((b.level - 7.0).abs() < 1e-9);
        // The reset headers still speak of the whole rate.
        assert!((b.until_full().as_secs_f64() - 0.3).abs() < 1e-9);
        assert!((b.wait_for(8.4).as_secs_f64() - 0.2).abs() < 1e-9);
    }
}
