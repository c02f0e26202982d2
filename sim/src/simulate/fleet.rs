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
    /// A crowded key: 24 hosts of one process each, half the jobs on the first, on a provider
    /// whose burst (5 requests) is smaller than the hosts. Run by name (`--row crowd`).
    Crowd,
}

impl FleetLoad {
    /// The rows run by default.
    pub const ALL: [FleetLoad; 2] = [FleetLoad::Even, FleetLoad::Skewed];
    /// Every row, by name.
    pub const NAMED: [FleetLoad; 3] = [FleetLoad::Even, FleetLoad::Skewed, FleetLoad::Crowd];

    pub fn name(self) -> &'static str {
        match self {
            FleetLoad::Even => "even",
            FleetLoad::Skewed => "skewed",
            FleetLoad::Crowd => "crowd",
        }
    }
}

/// The crowd row's hosts, and its provider's burst of requests.
const CROWD_HOSTS: usize = 24;
const CROWD_BURST: f64 = 5.0;

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
            FleetLoad::Crowd => return Self::fleet_crowd(jobs),
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

    /// The crowd row: 24 hosts of one process with 8 workers, 600 jobs, half of them on the
    /// first host; the incident's provider with a burst of 5 requests.
    fn fleet_crowd(jobs: Option<usize>) -> Scenario {
        let mut rng = Rng::with_seed(0x5eed_1234_abcd_ef01);
        let all = mixed_jobs(jobs.unwrap_or(600), &mut rng);
        Scenario {
            name: ScenarioName::Fleet,
            provider: provider(
                1200.0,
                CROWD_BURST,
                Some((1_200_000.0, 100_000.0)),
                RetryAfter::Seconds,
                true,
            ),
            workers: WORKERS,
            jobs: deal(all, CROWD_HOSTS, Some(0.5)),
            calibration: None,
            hosts: CROWD_HOSTS,
            fleet: Some(FleetLoad::Crowd),
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
    fn the_crowd_row_is_24_hosts_of_one_process_half_the_jobs_on_the_first() {
        let crowd = Scenario::fleet(FleetLoad::Crowd, None);
        assert_eq!((crowd.processes(), crowd.workers, crowd.hosts), (24, 8, 24));
        assert_eq!(crowd.job_count(), 600);
        assert_eq!(crowd.jobs[0].len(), 300);
        assert_eq!(crowd.label(), "fleet/crowd");
        let config = crowd.host_config(Strategy::LlmctlFleet, 3, Some("unix:///r.sock".into()));
        assert!(config.contains("burst_requests = 5"), "{config}");
        assert!(
            !FleetLoad::ALL.contains(&FleetLoad::Crowd),
            "run by name only"
        );
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
