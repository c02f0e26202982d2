//! The provider side of a limit: a continuous-refill bucket per dimension.

use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Bucket {
    pub per_minute: f64,
    pub capacity: f64,
    pub level: f64,
    updated: Instant,
}

impl Bucket {
    /// A full bucket: a provider's quota at the start of a run.
    pub fn full(per_minute: f64, capacity: f64, now: Instant) -> Bucket {
        Bucket {
            per_minute,
            capacity,
            level: capacity,
            updated: now,
        }
    }

    fn per_sec(&self) -> f64 {
        self.per_minute / 60.0
    }

    pub fn refill(&mut self, now: Instant) {
        if now > self.updated {
            let add = now.duration_since(self.updated).as_secs_f64() * self.per_sec();
            self.level = (self.level + add).min(self.capacity);
            self.updated = now;
        }
    }

    /// How long until `need` units are there.
    pub fn wait_for(&self, need: f64) -> Duration {
        if self.level >= need {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(((need - self.level) / self.per_sec()).min(86_400.0))
        }
    }

    /// How long until the bucket is full again.
    pub fn until_full(&self) -> Duration {
        self.wait_for(self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
