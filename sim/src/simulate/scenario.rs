//! The workloads: each scenario's provider limits, processes, workers and jobs, and the time
//! its limits allow.

use super::*;
use crate::provider::ProviderConfig;

/// A workload: the provider's limits, processes x workers, and each process's jobs.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: ScenarioName,
    pub provider: ProviderConfig,
    pub workers: usize,
    pub jobs: Vec<Vec<Job>>,
    /// Set for the rows of the calibrate matrix.
    pub calibration: Option<Calibration>,
    /// Hosts the processes are spread over (each host's processes are consecutive); a
    /// daemon-per-host strategy starts a daemon on each.
    pub hosts: usize,
    /// Set for the rows of the fleet scenario.
    pub fleet: Option<FleetLoad>,
    /// Set for the rows of the shapes scenario.
    pub shape: Option<Shape>,
    /// Set for the rows of the fleet-faults scenario.
    pub fault: Option<FleetFault>,
    /// Its workers are the openai SDK through the Python transport
    /// (`sim/python/transport_worker.py`), not the simulator's own.
    pub python_workers: bool,
}

pub(super) fn provider(
    rpm: f64,
    burst: f64,
    tpm: Option<(f64, f64)>,
    retry_after: RetryAfter,
    count_rejected: bool,
) -> ProviderConfig {
    ProviderConfig {
        limits: Limits {
            per_minute: [Some(rpm), tpm.map(|t| t.0), None, None],
            burst: [Some(burst), tpm.map(|t| t.1), None, None],
        },
        count_rejected,
        retry_after,
        latency: Duration::from_millis(50),
        completion_tokens: 50,
        cache_share: 0.0,
        faults: Vec::new(),
        limit_headers: true,
        external_share: 0.0,
        ..ProviderConfig::default()
    }
}

/// Mixed prompt sizes, deterministic.
pub(super) fn mixed_jobs(n: usize, rng: &mut Rng) -> Vec<Job> {
    const SIZES: [u64; 4] = [100, 400, 1000, 3000];
    (0..n)
        .map(|_| Job {
            input_tokens: SIZES[rng.usize(..SIZES.len())],
            max_tokens: 200,
            priority: 0,
            interactive: false,
            arrive_ms: 0,
            undeclared: false,
        })
        .collect()
}

/// Deals jobs round robin over the processes; with `first_share`, that share of them goes to
/// the first process and the rest round robin over the others.
pub(super) fn deal(jobs: Vec<Job>, processes: usize, first_share: Option<f64>) -> Vec<Vec<Job>> {
    let mut out = vec![Vec::new(); processes];
    let first = first_share.map_or(0, |s| (jobs.len() as f64 * s).round() as usize);
    for (i, j) in jobs.into_iter().enumerate() {
        let p = match (first_share, processes) {
            (Some(_), 2..) if i < first => 0,
            (Some(_), 2..) => 1 + (i - first) % (processes - 1),
            _ => i % processes,
        };
        out[p].push(j);
    }
    out
}

impl Scenario {
    /// `jobs` overrides the job count of incident, skew and priority.
    pub fn build(name: ScenarioName, jobs: Option<usize>) -> Scenario {
        let mut rng = Rng::with_seed(0x5eed_1234_abcd_ef01);
        // 20 requests/s with a burst of 20; 20k tokens/s with a 5 s burst; rejected requests count.
        let incident_provider = || {
            provider(
                1200.0,
                20.0,
                Some((1_200_000.0, 100_000.0)),
                RetryAfter::Seconds,
                true,
            )
        };
        match name {
            ScenarioName::Herd => Scenario {
                name,
                // 10 requests per rolling second, and no Retry-After to go by.
                provider: provider(600.0, 10.0, None, RetryAfter::None, false),
                workers: 10,
                jobs: (0..4)
                    .map(|_| {
                        (0..10)
                            .map(|_| Job {
                                input_tokens: 50,
                                max_tokens: 50,
                                priority: 0,
                                interactive: false,
                                arrive_ms: 0,
                                undeclared: false,
                            })
                            .collect()
                    })
                    .collect(),
                calibration: None,
                hosts: 1,
                fleet: None,
                shape: None,
                fault: None,
                python_workers: false,
            },
            ScenarioName::Incident => Scenario {
                name,
                provider: incident_provider(),
                workers: 12,
                jobs: deal(mixed_jobs(jobs.unwrap_or(300), &mut rng), 8, None),
                calibration: None,
                hosts: 1,
                fleet: None,
                shape: None,
                fault: None,
                python_workers: false,
            },
            ScenarioName::Skew => Scenario {
                name,
                provider: incident_provider(),
                workers: 12,
                jobs: deal(mixed_jobs(jobs.unwrap_or(300), &mut rng), 8, Some(0.7)),
                calibration: None,
                hosts: 1,
                fleet: None,
                shape: None,
                fault: None,
                python_workers: false,
            },
            ScenarioName::Priority => {
                let n = jobs.unwrap_or(240);
                let mut per = deal(mixed_jobs(n, &mut rng), 8, None);
                // Interactive jobs arrive during the batch, one every 400 ms, in one process.
                let interactive = (n / 8).max(4);
                for k in 0..interactive {
                    per[0].push(Job {
                        input_tokens: 400,
                        max_tokens: 200,
                        priority: 10,
                        interactive: true,
                        arrive_ms: 500 + 400 * k as u64,
                        undeclared: false,
                    });
                }
                Scenario {
                    name,
                    provider: incident_provider(),
                    workers: 12,
                    jobs: per,
                    calibration: None,
                    hosts: 1,
                    fleet: None,
                    shape: None,
                    fault: None,
                    python_workers: false,
                }
            }
            ScenarioName::Fleet => Self::fleet(FleetLoad::Even, jobs),
            ScenarioName::Shapes => Self::shape(Shape::NoMaxTokens, jobs),
            ScenarioName::Clouds => Self::shape(Shape::Bedrock, jobs),
            ScenarioName::FleetFaults => Self::fleet_fault(FleetFault::None, jobs),
            // Agents are run by `agents.rs` in this process, not by worker processes: the
            // herd stands in for anyone who builds it all the same.
            ScenarioName::Agents => Self::build(ScenarioName::Herd, jobs),
            // Fleet-scale drives virtual hosts in this process (`fleet_scale.rs`): the
            // fleet stands in for anyone who builds it all the same.
            ScenarioName::FleetScale => Self::fleet(FleetLoad::Even, jobs),
            ScenarioName::Calibrate => Self::calibrate(
                Calibration {
                    style: ProviderStyle::Openai,
                    limits: DaemonLimits::None,
                    external_share: 0.0,
                },
                jobs,
            ),
        }
    }

    pub fn processes(&self) -> usize {
        self.jobs.len()
    }

    pub fn job_count(&self) -> usize {
        self.jobs.iter().map(Vec::len).sum()
    }

    /// The shortest wall time the provider's limits allow for these jobs: for each limited
    /// dimension, what is beyond the burst at the refill rate; plus one answer's latency.
    pub fn ideal(&self) -> Duration {
        if let Some(ideal) = self.shape.and_then(|s| self.shape_ideal(s)) {
            return ideal;
        }
        let all: Vec<&Job> = self.jobs.iter().flatten().collect();
        let demand = [
            all.len() as f64,
            all.iter()
                .map(|j| (j.input_tokens + j.max_tokens) as f64)
                .sum::<f64>(),
        ];
        let l = &self.allowed();
        let mut secs = 0f64;
        for (i, d) in demand.iter().enumerate() {
            if let (Some(rate), Some(cap)) = (l.per_minute[i], l.capacity_of(i)) {
                secs = secs.max((d - cap).max(0.0) / (rate / 60.0));
            }
        }
        let last_arrival = all.iter().map(|j| j.arrive_ms).max().unwrap_or(0) as f64 / 1000.0;
        Duration::from_secs_f64(secs.max(last_arrival) + self.provider.latency.as_secs_f64())
    }

    pub(super) fn local_limits(&self, strategy: Strategy) -> Option<LocalLimits> {
        let l = &self.provider.limits;
        let div = match strategy {
            Strategy::BucketPerProcess => 1.0,
            Strategy::BucketSplit => self.processes() as f64,
            _ => return None,
        };
        Some(LocalLimits {
            rpm: l.per_minute[0]? / div,
            burst_requests: (l.capacity_of(0)? / div).max(1.0),
            tpm: l.per_minute[1].map(|t| t / div),
            burst_tokens: l.capacity_of(1).map(|c| c / div),
        })
    }

    /// The daemon config that states the provider's limits (for a calibrate row: as exact,
    /// missing, doubled or halved, without saying how output is counted).
    pub(super) fn daemon_config(&self) -> String {
        if let Some(c) = self.calibration {
            return self.calibrate_config(c);
        }
        if self.shape.is_some() {
            // A provider the daemon has never seen, and no config.
            return String::new();
        }
        let l = &self.provider.limits;
        let mut s = String::from("[keys.\"sim\"]\noutput_counted_as = \"reserved\"\n");
        if let (Some(r), Some(c)) = (l.per_minute[0], l.capacity_of(0)) {
            s += &format!(
                "requests_per_minute = {}\nburst_requests = {}\n",
                r as u64, c as u64
            );
        }
        if let (Some(r), Some(c)) = (l.per_minute[1], l.capacity_of(1)) {
            s += &format!(
                "tokens_per_minute = {}\nburst_tokens = {}\n",
                r as u64, c as u64
            );
        }
        s
    }
}
