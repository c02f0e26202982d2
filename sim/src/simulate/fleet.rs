//! The fleet scenario: 3 hosts x 4 processes x 8 workers on one provider (the incident's: 20
//! requests/s, 20k tokens/s, rejected requests counted), with even or skewed load, and a
//! daemon per host configured three ways: in a fleet sharing the limits through Redis, each
//! with the full limits, or each with a third.

use super::*;

/// How the jobs are spread over the hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetLoad {
    /// The same share on every host.
    Even,
    /// 70 % on the first host, 15 % on each other.
    Skewed,
}

impl FleetLoad {
    pub const ALL: [FleetLoad; 2] = [FleetLoad::Even, FleetLoad::Skewed];

    pub fn name(self) -> &'static str {
        match self {
            FleetLoad::Even => "even",
            FleetLoad::Skewed => "skewed",
        }
    }
}

/// Hosts, processes per host and workers per process of the fleet scenario.
const HOSTS: usize = 3;
const PROCESSES_PER_HOST: usize = 4;
const WORKERS: usize = 8;

impl Scenario {
    /// Both rows of the fleet scenario.
    pub fn fleet_matrix(jobs: Option<usize>) -> Vec<Scenario> {
        FleetLoad::ALL
            .iter()
            .map(|&load| Self::fleet(load, jobs))
            .collect()
    }

    pub fn fleet(load: FleetLoad, jobs: Option<usize>) -> Scenario {
        let mut rng = Rng::with_seed(0x5eed_1234_abcd_ef01);
        let all = mixed_jobs(jobs.unwrap_or(300), &mut rng);
        let per_host = match load {
            FleetLoad::Even => deal(all, HOSTS, None),
            FleetLoad::Skewed => deal(all, HOSTS, Some(0.7)),
        };
        let jobs = per_host
            .into_iter()
            .flat_map(|host| deal(host, PROCESSES_PER_HOST, None))
            .collect();
        Scenario {
            name: ScenarioName::Fleet,
            provider: provider(
                1200.0,
                20.0,
                Some((1_200_000.0, 100_000.0)),
                RetryAfter::Seconds,
                true,
            ),
            workers: WORKERS,
            jobs,
            calibration: None,
            hosts: HOSTS,
            fleet: Some(load),
            shape: None,
            fault: None,
            python_workers: false,
        }
    }

    /// The config of host `h`'s daemon under `strategy` (`redis`: the fleet's URL).
    pub(super) fn host_config(
        &self,
        strategy: Strategy,
        h: usize,
        redis: Option<String>,
    ) -> String {
        let limits = self.daemon_config();
        match (strategy, redis) {
            (Strategy::LlmctlFleet, Some(url)) => {
                format!("[fleet]\nredis = \"{url}\"\nhost = \"host-{h}\"\n\n{limits}")
            }
            (Strategy::LlmctlSplit, _) => self.split_config(self.hosts as f64),
            _ => limits,
        }
    }

    /// The provider's limits, each divided by `by`.
    fn split_config(&self, by: f64) -> String {
        let l = &self.provider.limits;
        let mut s = String::from("[keys.\"sim\"]\noutput_counted_as = \"reserved\"\n");
        for (i, dim) in [(0, "requests"), (1, "tokens")] {
            if let (Some(r), Some(c)) = (l.per_minute[i], l.capacity_of(i)) {
                s += &format!(
                    "{dim}_per_minute = {}\nburst_{dim} = {}\n",
                    (r / by) as u64,
                    ((c / by) as u64).max(1)
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_hosts_of_four_processes_with_even_or_skewed_load() {
        let even = Scenario::fleet(FleetLoad::Even, Some(300));
        assert_eq!((even.processes(), even.workers, even.hosts), (12, 8, 3));
        assert!(even.jobs.iter().all(|j| (25..=25).contains(&j.len())));
        let skewed = Scenario::fleet(FleetLoad::Skewed, Some(300));
        let first_host: usize = skewed.jobs[..4].iter().map(Vec::len).sum();
        assert_eq!(first_host, 210);
        assert_eq!(skewed.job_count(), 300);
        assert_eq!(skewed.label(), "fleet/skewed");
    }

    #[test]
    fn each_strategy_configures_its_hosts() {
        let s = Scenario::fleet(FleetLoad::Even, Some(30));
        let fleet = s.host_config(Strategy::LlmctlFleet, 2, Some("unix:///r.sock".into()));
        assert!(fleet.contains("[fleet]\nredis = \"unix:///r.sock\"\nhost = \"host-2\""));
        assert!(fleet.contains("requests_per_minute = 1200"));
        let per_host = s.host_config(Strategy::LlmctlPerHost, 1, None);
        assert!(!per_host.contains("[fleet]"));
        assert!(per_host.contains("requests_per_minute = 1200"));
        let split = s.host_config(Strategy::LlmctlSplit, 1, None);
        assert!(
            split.contains("requests_per_minute = 400\nburst_requests = 6"),
            "{split}"
        );
        assert!(split.contains("tokens_per_minute = 400000\nburst_tokens = 33333"));
        assert_eq!(
            Strategy::defaults(ScenarioName::Fleet),
            vec![
                Strategy::LlmctlFleet,
                Strategy::LlmctlPerHost,
                Strategy::LlmctlSplit
            ]
        );
        assert!(!Strategy::defaults(ScenarioName::Skew).contains(&Strategy::LlmctlFleet));
    }
}
