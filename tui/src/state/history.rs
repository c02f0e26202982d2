//! One sample per Watch message for the charts and sparklines, kept for the last 15 minutes.

use std::collections::VecDeque;

/// How far back the charts reach.
pub const WINDOW_MS: i64 = 15 * 60 * 1000;
/// A hard bound on samples per history, whatever the Watch interval (15 min at 4 per second).
pub const MAX_SAMPLES: usize = 3600;
/// Samples kept across all keys; with very many keys each keeps fewer (down to MIN_SAMPLES).
pub const SAMPLE_BUDGET: usize = 500_000;
pub const MIN_SAMPLES: usize = 30;

/// What one message says about a key (or about all keys summed): cumulative counters as the
/// daemon reports them, and instantaneous figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reading {
    pub requests_per_second: f64,
    pub rate_limited_total: u64,
    pub queue_wait_p50_ms: u64,
    pub queue_wait_p95_ms: u64,
    pub queue_depth: u64,
    pub tokens_reserved_total: u64,
    pub tokens_used_total: u64,
    pub fallbacks_total: u64,
    /// The effective limits then (0: none): requests per second, tokens per minute.
    pub requests_limit_per_second: f64,
    pub tokens_limit_per_minute: f64,
}

/// One point of history: counters turned into "since the previous message".
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    pub unix_ms: i64,
    pub requests_per_second: f64,
    pub rate_limited: u64,
    pub queue_wait_p50_ms: u64,
    pub queue_wait_p95_ms: u64,
    pub queue_depth: u64,
    pub tokens_reserved: u64,
    pub tokens_used: u64,
    pub fallbacks: u64,
    pub requests_limit_per_second: f64,
    pub tokens_limit_per_minute: f64,
}

/// A figure that can be drawn as a sparkline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// In hundredths, so that a sparkline of small rates keeps its shape.
    RequestsPerSecond,
    RateLimited,
    QueueWaitP95,
    QueueDepth,
    TokensReserved,
    TokensUsed,
}

impl Metric {
    fn value(self, s: &Sample) -> u64 {
        match self {
            Metric::RequestsPerSecond => (s.requests_per_second.max(0.0) * 100.0).round() as u64,
            Metric::RateLimited => s.rate_limited,
            Metric::QueueWaitP95 => s.queue_wait_p95_ms,
            Metric::QueueDepth => s.queue_depth,
            Metric::TokensReserved => s.tokens_reserved,
            Metric::TokensUsed => s.tokens_used,
        }
    }

    /// Counts add up when samples share a column; levels and rates take the highest.
    fn is_count(self) -> bool {
        matches!(
            self,
            Metric::RateLimited | Metric::TokensReserved | Metric::TokensUsed
        )
    }
}

/// A line a chart can draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartLine {
    RequestsPerSecond,
    RequestsLimit,
    TokensReservedPerMinute,
    TokensUsedPerMinute,
    TokensLimit,
    RateLimitedPerMinute,
    FallbacksPerMinute,
    WaitP50,
    WaitP95,
}

#[derive(Clone, Debug, Default)]
pub struct History {
    samples: VecDeque<Sample>,
    last: Option<Reading>,
}

/// Growth of a counter; a counter that went down means the daemon restarted from zero.
fn growth(now: u64, before: Option<u64>) -> u64 {
    match before {
        Some(b) if now >= b => now - b,
        Some(_) => now,
        None => 0,
    }
}

/// How many samples each of `keys` histories may keep.
pub fn samples_per_key(keys: usize) -> usize {
    (SAMPLE_BUDGET / keys.max(1)).clamp(MIN_SAMPLES, MAX_SAMPLES)
}

impl History {
    pub fn record(&mut self, unix_ms: i64, r: Reading) {
        self.record_bounded(unix_ms, r, MAX_SAMPLES);
    }

    /// Records one message, keeping at most `keep` samples and none older than WINDOW_MS.
    pub fn record_bounded(&mut self, unix_ms: i64, r: Reading, keep: usize) {
        let last = self.last;
        self.samples.push_back(Sample {
            unix_ms,
            requests_per_second: r.requests_per_second,
            rate_limited: growth(r.rate_limited_total, last.map(|l| l.rate_limited_total)),
            queue_wait_p95_ms: r.queue_wait_p95_ms,
            queue_depth: r.queue_depth,
            tokens_reserved: growth(
                r.tokens_reserved_total,
                last.map(|l| l.tokens_reserved_total),
            ),
            tokens_used: growth(r.tokens_used_total, last.map(|l| l.tokens_used_total)),
            queue_wait_p50_ms: r.queue_wait_p50_ms,
            fallbacks: growth(r.fallbacks_total, last.map(|l| l.fallbacks_total)),
            requests_limit_per_second: r.requests_limit_per_second,
            tokens_limit_per_minute: r.tokens_limit_per_minute,
        });
        self.last = Some(r);
        while self.samples.len() > keep.max(1)
            || self
                .samples
                .front()
                .is_some_and(|s| s.unix_ms < unix_ms - WINDOW_MS)
        {
            self.samples.pop_front();
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// Milliseconds between the oldest and the newest sample.
    pub fn span_ms(&self) -> i64 {
        match (self.samples.front(), self.samples.back()) {
            (Some(a), Some(b)) => b.unix_ms - a.unix_ms,
            _ => 0,
        }
    }

    /// 429s counted in the samples of the last `ms` milliseconds.
    pub fn rate_limited_within(&self, ms: i64) -> u64 {
        let Some(newest) = self.samples.back() else {
            return 0;
        };
        self.samples
            .iter()
            .rev()
            .take_while(|s| s.unix_ms > newest.unix_ms - ms)
            .map(|s| s.rate_limited)
            .sum()
    }

    /// Points for a chart of the last `window_ms`: x in seconds before the newest sample
    /// (negative), y as the chart shows it. Counts are shown per minute as the sum over the
    /// trailing minute, so they compare with a per-minute limit the way the bucket does.
    pub fn points(&self, line: ChartLine, window_ms: i64) -> Vec<(f64, f64)> {
        let Some(newest) = self.samples.back() else {
            return Vec::new();
        };
        let count = |s: &Sample| match line {
            ChartLine::TokensReservedPerMinute => Some(s.tokens_reserved),
            ChartLine::TokensUsedPerMinute => Some(s.tokens_used),
            ChartLine::RateLimitedPerMinute => Some(s.rate_limited),
            ChartLine::FallbacksPerMinute => Some(s.fallbacks),
            _ => None,
        };
        let mut out = Vec::new();
        let mut minute: u64 = 0;
        let mut oldest = 0;
        for (i, s) in self.samples.iter().enumerate() {
            if let Some(v) = count(s) {
                minute += v;
                while self.samples[oldest].unix_ms <= s.unix_ms - 60_000 && oldest < i {
                    minute -= count(&self.samples[oldest]).unwrap_or(0);
                    oldest += 1;
                }
            }
            if s.unix_ms < newest.unix_ms - window_ms {
                continue;
            }
            let y = match line {
                ChartLine::RequestsPerSecond => s.requests_per_second,
                ChartLine::RequestsLimit => s.requests_limit_per_second,
                ChartLine::TokensLimit => s.tokens_limit_per_minute,
                ChartLine::WaitP50 => s.queue_wait_p50_ms as f64,
                ChartLine::WaitP95 => s.queue_wait_p95_ms as f64,
                _ => minute as f64,
            };
            out.push(((s.unix_ms - newest.unix_ms) as f64 / 1000.0, y));
        }
        out
    }

    /// The sum of a counted metric over every sample kept.
    pub fn total(&self, metric: Metric) -> u64 {
        self.samples.iter().map(|s| metric.value(s)).sum()
    }

    /// `columns` values for a sparkline, oldest on the left. While there are fewer samples than
    /// columns each sample is one column; after that the kept span is spread over the columns.
    pub fn series(&self, metric: Metric, columns: usize) -> Vec<u64> {
        if columns == 0 {
            return Vec::new();
        }
        if self.samples.len() <= columns {
            return self.samples.iter().map(|s| metric.value(s)).collect();
        }
        let mut out = vec![0u64; columns];
        let (Some(first), span) = (self.samples.front(), self.span_ms()) else {
            return out;
        };
        let start = first.unix_ms;
        for s in &self.samples {
            let offset = (s.unix_ms - start).clamp(0, span) as u128;
            let col = ((offset * columns as u128) / (span as u128 + 1)) as usize;
            let slot = &mut out[col.min(columns - 1)];
            let v = metric.value(s);
            if metric.is_count() {
                *slot += v;
            } else {
                *slot = (*slot).max(v);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(rl: u64, reserved: u64) -> Reading {
        Reading {
            requests_per_second: 1.5,
            rate_limited_total: rl,
            tokens_reserved_total: reserved,
            ..Reading::default()
        }
    }

    #[test]
    fn counters_become_growth_since_the_previous_message() {
        let mut h = History::default();
        h.record(1_000, reading(3, 100));
        h.record(2_000, reading(5, 250));
        h.record(3_000, reading(5, 250));
        let rl: Vec<u64> = h.samples().map(|s| s.rate_limited).collect();
        assert_eq!(
            rl,
            vec![0, 2, 0],
            "the first message has nothing to compare with"
        );
        assert_eq!(h.total(Metric::TokensReserved), 150);
    }

    #[test]
    fn a_restarted_daemon_counts_from_zero_again() {
        let mut h = History::default();
        h.record(1_000, reading(40, 0));
        h.record(2_000, reading(2, 0));
        assert_eq!(h.samples().last().map(|s| s.rate_limited), Some(2));
    }

    #[test]
    fn only_the_last_fifteen_minutes_are_kept() {
        let mut h = History::default();
        for i in 0..1_000 {
            h.record(i * 1_000, reading(0, 0));
        }
        assert_eq!(h.span_ms(), WINDOW_MS);
        assert_eq!(h.len(), 901);
    }

    #[test]
    fn chart_points_turn_counts_into_rates_within_the_window() {
        let mut h = History::default();
        for i in 0..120 {
            h.record(i * 1_000, reading(0, i as u64 * 500));
        }
        // 500 tokens a second: 30k in the trailing minute, shown over the last minute only.
        let pts = h.points(ChartLine::TokensReservedPerMinute, 60_000);
        assert_eq!(pts.len(), 61);
        assert_eq!(pts.last(), Some(&(0.0, 30_000.0)));
        // A minute after the first message, which has nothing to compare with: 59 seconds' worth.
        assert_eq!(pts[0], (-60.0, 29_500.0));
        // A burst shows as what it is against a per-minute limit, not scaled up.
        let mut b = History::default();
        b.record(0, reading(0, 0));
        b.record(1_000, reading(0, 10_000));
        b.record(2_000, reading(0, 10_000));
        let pts = b.points(ChartLine::TokensReservedPerMinute, 60_000);
        assert_eq!(pts.last(), Some(&(0.0, 10_000.0)));
    }

    #[test]
    fn a_fast_interval_is_bounded_by_count() {
        let mut h = History::default();
        for i in 0..5_000 {
            h.record(i * 50, reading(0, 0));
        }
        assert_eq!(h.len(), MAX_SAMPLES);
    }

    #[test]
    fn many_keys_share_a_budget_of_samples() {
        assert_eq!(samples_per_key(3), MAX_SAMPLES);
        assert_eq!(samples_per_key(10_000), 50);
        assert_eq!(samples_per_key(1_000_000), MIN_SAMPLES);
        let mut h = History::default();
        for i in 0..100 {
            h.record_bounded(i * 1_000, reading(0, 0), 50);
        }
        assert_eq!(h.len(), 50);
    }

    #[test]
    fn recent_429s_look_back_from_the_newest_sample() {
        let mut h = History::default();
        h.record(0, reading(0, 0));
        h.record(10_000, reading(4, 0));
        h.record(50_000, reading(5, 0));
        assert_eq!(h.rate_limited_within(30_000), 1);
        assert_eq!(h.rate_limited_within(60_000), 5);
    }

    #[test]
    fn series_is_one_column_per_sample_until_they_do_not_fit() {
        let mut h = History::default();
        for (i, rl) in [0, 1, 1, 4].into_iter().enumerate() {
            h.record(i as i64 * 1_000, reading(rl, 0));
        }
        assert_eq!(h.series(Metric::RateLimited, 10), vec![0, 1, 0, 3]);
        assert_eq!(
            h.series(Metric::RequestsPerSecond, 10),
            vec![150, 150, 150, 150]
        );
    }

    #[test]
    fn series_spreads_many_samples_over_the_columns() {
        let mut h = History::default();
        for i in 0..=100u64 {
            h.record(i as i64 * 1_000, reading(i, 0));
        }
        let s = h.series(Metric::RateLimited, 4);
        assert_eq!(s.len(), 4);
        // Every 429 is counted once, whichever column it falls in.
        assert_eq!(s.iter().sum::<u64>(), 100);
        assert!(s.iter().all(|&c| c >= 24), "{s:?}");
        let rates = h.series(Metric::RequestsPerSecond, 4);
        assert_eq!(rates, vec![150; 4], "rates take the highest, not the sum");
    }
}
