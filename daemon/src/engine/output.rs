//! Output nobody declared: a request without max_tokens (the default of most frameworks)
//! reserves what answers on its key have recently produced, not a large constant, and is
//! settled at what it produced (a provider cannot charge a bound nobody sent).

use super::*;

/// How many recent answers the estimate is drawn from.
pub const OUTPUT_SAMPLES: usize = 64;
/// The share of those answers the estimate covers: a high percentile, so most undeclared
/// requests reserve enough and the rest leave a little debt the next refill pays.
pub const OUTPUT_PERCENTILE: f64 = 90.0;

/// What an undeclared request reserves at most before any answer on its key: agent and chat
/// turns mostly produce a few hundred tokens, so the clients' 4096 would hold back four times
/// what the first requests use; the settlement corrects the rest.
pub const FIRST_UNDECLARED_OUTPUT: u64 = 1024;

/// The output tokens recently settled on a key, and the estimate drawn from them.
#[derive(Clone, Debug, Default)]
pub struct OutputEstimate {
    recent: VecDeque<u64>,
    estimate: Option<u64>,
}

impl OutputEstimate {
    /// An answer produced `output` tokens.
    pub fn record(&mut self, output: u64) {
        if self.recent.len() == OUTPUT_SAMPLES {
            self.recent.pop_front();
        }
        self.recent.push_back(output);
        let mut sorted: Vec<u64> = self.recent.iter().copied().collect();
        sorted.sort_unstable();
        self.estimate = llmctl_common::nearest_rank(&sorted, OUTPUT_PERCENTILE);
    }

    /// What an undeclared request reserves now; None before any answer.
    pub fn estimate(&self) -> Option<u64> {
        self.estimate
    }
}

impl Engine {
    /// `need` as reserved on key `id`: its output weighed as the key's tokens limit counts it,
    /// and an undeclared output the key's learned estimate once it has one (until then the
    /// caller's own figure, at most `FIRST_UNDECLARED_OUTPUT`).
    pub(super) fn output_need(&self, id: KeyId, mut need: Need) -> Need {
        need.output_weight = self.keys[id].output_weight;
        if need.undeclared {
            match self.keys[id].output.estimate() {
                Some(e) => {
                    need.output = e;
                    need.learned = true;
                }
                None => need.output = need.output.min(FIRST_UNDECLARED_OUTPUT),
            }
        }
        need
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_is_a_high_percentile_of_recent_answers() {
        let mut e = OutputEstimate::default();
        assert_eq!(e.estimate(), None);
        for i in 1..=100 {
            e.record(i);
        }
        // The last 64 answers (37..=100); their 90th percentile.
        assert_eq!(e.estimate(), Some(94));
        for _ in 0..OUTPUT_SAMPLES {
            e.record(10);
        }
        assert_eq!(e.estimate(), Some(10), "old answers are forgotten");
    }
}
