//! A fleet's line: in a crowded fleet a bucket holds no part of the rate, only the units the
//! fleet's line in Redis gave it, each from the moment it is valid. Nothing refills it; a
//! request needs its whole amount (no debt on a part of the burst, which N hosts would each
//! take at once); what a request did not use stays, up to one burst.

use super::Bucket;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Units given to a bucket that are not valid yet, by the moment they are.
#[derive(Clone, Debug, Default)]
pub struct Line {
    pending: VecDeque<(Instant, f64)>,
    /// What requests settled below their estimate gave back, for the line (the host's next
    /// ask returns it), not kept here.
    returned: f64,
    /// The largest unit that came in since the last grant: the line sizes each unit by the
    /// request it is for, and one larger than the burst is held whole until that request goes.
    largest: f64,
}

impl Bucket {
    /// Whether it holds only what the fleet's line gives it.
    pub fn on_line(&self) -> bool {
        self.line.is_some()
    }

    /// Joins the fleet's line (`on`) or leaves it. Joining keeps a debt and nothing else (the
    /// part it held went back to the fleet); leaving drops the units not valid yet.
    pub fn set_line(&mut self, on: bool, now: Instant) {
        if on == self.line.is_some() {
            return;
        }
        self.refill(now);
        if on {
            self.level = self.level.min(0.0);
            self.line = Some(Line::default());
        } else {
            self.line = None;
        }
        self.updated = now;
    }

    /// Units the line gave, valid from their moments (in order or not).
    pub fn add_units(&mut self, units: &[(Instant, f64)], now: Instant) {
        let Some(line) = &mut self.line else {
            return;
        };
        for &(at, n) in units.iter().filter(|u| u.1 > 0.0) {
            let i = line.pending.partition_point(|p| p.0 <= at);
            line.pending.insert(i, (at, n));
        }
        self.refill(now);
    }

    /// What it holds and will hold of what the line gave (None: not on a line).
    pub fn line_units(&self) -> Option<f64> {
        let line = self.line.as_ref()?;
        Some(self.level + line.pending.iter().map(|p| p.1).sum::<f64>())
    }

    /// What settled requests gave back since the line last took it (None: not on a line).
    pub fn line_returned(&self) -> Option<f64> {
        self.line.as_ref().map(|l| l.returned)
    }

    /// The line took `amount` of what was given back.
    pub fn take_line_returned(&mut self, amount: f64) {
        if let Some(l) = &mut self.line {
            l.returned = (l.returned - amount.max(0.0)).max(0.0);
        }
    }

    /// A settled request on a line gave back `units` (its estimate was above what it used).
    pub(super) fn return_to_line(&mut self, units: f64) -> bool {
        match &mut self.line {
            Some(l) if units > 0.0 => {
                l.returned += units;
                true
            }
            _ => false,
        }
    }

    /// When the last unit it waits for is valid (None: not on a line, or none waited for).
    pub fn line_ends(&self) -> Option<Instant> {
        self.line.as_ref()?.pending.back().map(|p| p.0)
    }

    /// Starts refilling from its share `draw` (0 to 1) of a unit behind: the hosts of a fleet
    /// that all began to refill at once (Redis stopped answering) reach a whole unit at
    /// moments spread over one unit's time, not together.
    pub fn phase_line(&mut self, draw: f64, now: Instant) {
        self.refill(now);
        self.level = self.level.min(0.0) - draw.clamp(0.0, 1.0);
    }

    /// A cooldown until `until`: what it holds and the units valid before then go.
    pub fn cool_line(&mut self, until: Instant, now: Instant) {
        self.refill(now);
        self.level = self.level.min(0.0);
        if let Some(line) = &mut self.line {
            line.pending.retain(|p| p.0 >= until);
        }
    }

    /// Holds what `from` (a bucket of the same quota on the same line, refilled to `now`)
    /// holds and waits for.
    pub fn follow_line(&mut self, from: &Bucket, now: Instant) {
        let (Some(line), Some(theirs)) = (&mut self.line, &from.line) else {
            return;
        };
        line.pending = theirs.pending.clone();
        self.level = from.level;
        self.updated = now;
        self.refill(now);
    }

    /// Takes back the units given and not valid yet (the limiter stops using them).
    pub fn take_back_units(&mut self) -> Vec<(Instant, f64)> {
        self.line
            .as_mut()
            .map(|l| l.pending.drain(..).collect())
            .unwrap_or_default()
    }

    /// A grant took from it: a unit held whole for a request larger than the burst is spent.
    pub(super) fn line_took(&mut self) {
        if let Some(line) = &mut self.line {
            line.largest = 0.0;
        }
    }

    /// The units valid by `now` come in; a level above one burst (or above the largest unit
    /// that came in since the last grant, which is one request's) is cut to it. With a share
    /// (the fleet's Redis does not answer: each host its limit ÷ N) it refills at its share
    /// too, up to its part of the burst or one unit, whole units still: a request never goes
    /// on a part of a unit, so N hosts never send N at once (`phase_line` spreads them).
    pub(super) fn refill_line(&mut self, now: Instant) {
        let mut cap = self.rate.capacity.max(1.0);
        if self.share > 0.0 {
            cap = (self.rate.capacity * self.share).max(1.0);
            if now > self.updated && self.level < cap {
                let ms = now.duration_since(self.updated).as_secs_f64() * 1000.0;
                self.level = (self.level + ms * self.rate.per_ms() * self.share).min(cap);
            }
        }
        if let Some(line) = &mut self.line {
            while line.pending.front().is_some_and(|p| p.0 <= now) {
                if let Some((_, n)) = line.pending.pop_front() {
                    self.level += n;
                    line.largest = line.largest.max(n);
                }
            }
            cap = cap.max(line.largest);
        }
        self.updated = self.updated.max(now);
        self.level = self.level.min(cap);
    }

    /// When `units` will be there on a line: the moment a unit waited for makes them, or, past
    /// those, as if refilled at the floor of the rate (the wait a caller is told).
    pub(super) fn line_ready_at(&self, units: f64) -> Option<Instant> {
        let line = self.line.as_ref()?;
        let mut level = self.level;
        if level >= units {
            return Some(self.updated);
        }
        let mut at = self.updated;
        for &(t, n) in &line.pending {
            level += n;
            at = t;
            if level >= units {
                return Some(at);
            }
        }
        let per_ms = self.rate.per_ms() * self.share_floor;
        let ms = if per_ms > 0.0 {
            (units - level) / per_ms
        } else {
            1e9
        };
        Some(at + Duration::from_nanos((ms * 1e6).ceil().clamp(1.0, 1e18) as u64))
    }
}
