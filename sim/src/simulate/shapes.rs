//! The shapes of real traffic, each through llmctl with no config on a provider the daemon has
//! never seen: requests without max_tokens, a server that limits requests in flight, daily
//! quotas in OpenAI's and Gemini's words, fixed windows, a cold herd, and limits halved or
//! doubled mid-run.

use super::*;
use crate::provider::{Cloud, ProviderConfig, QuotaStyle};

/// One row of the shapes scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The incident workload sent without max_tokens (the default of most frameworks), an
    /// OpenAI-style key that charges max_tokens when one is declared.
    NoMaxTokens,
    /// The same through the real Python transport and the openai SDK, as the README shows them
    /// (a Python with the `llmctl` package and `openai`: `$LLMCTL_SIM_PYTHON`, else `.venv`).
    NoMaxTokensPython,
    /// The same with max_tokens.
    MaxTokens,
    /// The same through the Python transport and the openai SDK.
    MaxTokensPython,
    /// A self-hosted server that refuses beyond 8 requests in flight, no limit headers, 0.3 s
    /// answers.
    MaxInFlight,
    /// 100 requests a day; 300 jobs.
    DailyQuota,
    /// The same, refused in Gemini's words.
    DailyQuotaGemini,
    /// A LiteLLM-like upstream: fixed 5 s windows of 100 requests.
    FixedWindow,
    /// The herd: 4 x 10 clients at once, 10 per rolling second, no headers, no Retry-After.
    Herd,
    /// The incident workload with every limit halved 8 s in...
    Halved,
    /// ...or doubled.
    Doubled,
    /// The clouds scenario's rows: 5 requests/s limited as each cloud does, 8 processes x 6
    /// workers calling the cloud's own API. Amazon Bedrock's Converse (no limit headers, a
    /// ThrottlingException that names no delay)...
    Bedrock,
    /// ...Gemini on Vertex AI (no limit headers, RESOURCE_EXHAUSTED)...
    Vertex,
    /// ...and an Azure OpenAI deployment (one-second windows, retry-after-ms).
    Azure,
}

impl Shape {
    pub const ALL: [Shape; 11] = [
        Shape::NoMaxTokens,
        Shape::NoMaxTokensPython,
        Shape::MaxTokens,
        Shape::MaxTokensPython,
        Shape::MaxInFlight,
        Shape::DailyQuota,
        Shape::DailyQuotaGemini,
        Shape::FixedWindow,
        Shape::Herd,
        Shape::Halved,
        Shape::Doubled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::NoMaxTokens => "no-max-tokens",
            Shape::NoMaxTokensPython => "no-max-tokens-python",
            Shape::MaxTokens => "max-tokens",
            Shape::MaxTokensPython => "max-tokens-python",
            Shape::MaxInFlight => "max-in-flight",
            Shape::DailyQuota => "daily-quota",
            Shape::DailyQuotaGemini => "daily-quota-gemini",
            Shape::FixedWindow => "fixed-window",
            Shape::Herd => "herd",
            Shape::Halved => "halved",
            Shape::Doubled => "doubled",
            Shape::Bedrock => "bedrock",
            Shape::Vertex => "vertex",
            Shape::Azure => "azure",
        }
    }

    /// The rows whose workers are the openai SDK through the Python transport.
    pub fn python(self) -> bool {
        matches!(self, Shape::NoMaxTokensPython | Shape::MaxTokensPython)
    }

    /// The clouds scenario's rows.
    pub const CLOUDS: [Shape; 3] = [Shape::Bedrock, Shape::Vertex, Shape::Azure];

    /// The cloud a row limits as, and the API its workers call.
    pub fn cloud(self) -> Option<(Cloud, ProviderStyle)> {
        match self {
            Shape::Bedrock => Some((Cloud::Bedrock, ProviderStyle::Bedrock)),
            Shape::Vertex => Some((Cloud::Vertex, ProviderStyle::Vertex)),
            Shape::Azure => Some((Cloud::Azure, ProviderStyle::Azure)),
            _ => None,
        }
    }

    /// Requests a day, for the daily rows: a third of the jobs (100 of 300).
    pub fn daily(self, jobs: usize) -> Option<u64> {
        matches!(self, Shape::DailyQuota | Shape::DailyQuotaGemini)
            .then_some((jobs as u64 / 3).max(1))
    }
}

/// What the clients reserve for an output nobody declared (the Python and Node transports'
/// `default_output_tokens`).
pub const DEFAULT_OUTPUT_TOKENS: u64 = 4096;

/// The Python worker of the `no-max-tokens-python` row.
pub const PYTHON_WORKER: &str = include_str!("../../python/transport_worker.py");

/// The Python that runs it: `$LLMCTL_SIM_PYTHON`, else the project's `.venv` (scripts/python-env
/// makes it), else `python3`.
pub fn python() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("LLMCTL_SIM_PYTHON") {
        return p.into();
    }
    let venv = std::path::Path::new(".venv/bin/python");
    if venv.exists() {
        return venv.to_path_buf();
    }
    "python3".into()
}

/// When the halved and doubled rows change their limits.
const CHANGE_AT: Duration = Duration::from_secs(8);

impl Scenario {
    /// Every shape, with `jobs` jobs where the shape has a job count (300 by default).
    pub fn shapes_matrix(jobs: Option<usize>) -> Vec<Scenario> {
        Shape::ALL.iter().map(|&s| Self::shape(s, jobs)).collect()
    }

    /// Every cloud's row, with `jobs` jobs each (300 by default: an ideal of 59 s).
    pub fn clouds_matrix(jobs: Option<usize>) -> Vec<Scenario> {
        Shape::CLOUDS
            .iter()
            .map(|&s| Self::shape(s, jobs))
            .collect()
    }

    pub fn shape(shape: Shape, jobs: Option<usize>) -> Scenario {
        let n = jobs.unwrap_or(300);
        let mut rng = Rng::with_seed(0x5eed_1234_abcd_ef01);
        // The calibrate matrix's provider: 20 requests/s (burst 5), 25k tokens/s (2 s burst),
        // OpenAI-style headers, rejected requests counted.
        let incident = || {
            provider(
                1200.0,
                5.0,
                Some((1_500_000.0, 50_000.0)),
                RetryAfter::Seconds,
                true,
            )
        };
        // The clouds' rows: 5 requests a second (5 at once), no tokens limit, limited as the
        // cloud does.
        let cloud_provider =
            |cloud: Cloud| provider(300.0, 5.0, None, RetryAfter::Seconds, false).as_cloud(cloud);
        // The SDK rows': 20 requests/s (burst 5) and 10k tokens/s (2 s burst), answers of
        // 0.3 s give or take half, as a real API's vary.
        let sdk = || ProviderConfig {
            latency: Duration::from_millis(300),
            latency_spread: 0.5,
            ..provider(
                1200.0,
                5.0,
                Some((600_000.0, 20_000.0)),
                RetryAfter::Seconds,
                true,
            )
        };
        let mut provider = incident();
        let mut job_list = mixed_jobs(n, &mut rng);
        let mut workers = 12;
        let mut processes = 8;
        match shape {
            Shape::NoMaxTokens | Shape::NoMaxTokensPython => {
                provider = sdk();
                for j in &mut job_list {
                    j.undeclared = true;
                    j.max_tokens = DEFAULT_OUTPUT_TOKENS;
                }
            }
            Shape::MaxTokens | Shape::MaxTokensPython => provider = sdk(),
            Shape::MaxInFlight => {
                provider = ProviderConfig {
                    max_in_flight: Some(8),
                    latency: Duration::from_millis(300),
                    latency_spread: 0.5,
                    limit_headers: false,
                    retry_after: RetryAfter::None,
                    completion_tokens: 50,
                    ..ProviderConfig::default()
                };
            }
            Shape::DailyQuota | Shape::DailyQuotaGemini => {
                provider.requests_per_day = shape.daily(n);
                provider.quota_style = if shape == Shape::DailyQuotaGemini {
                    QuotaStyle::Gemini
                } else {
                    QuotaStyle::Openai
                };
            }
            Shape::FixedWindow => {
                provider = provider_fixed_window();
            }
            Shape::Herd => {
                let mut herd = Scenario::build(ScenarioName::Herd, None);
                herd.name = ScenarioName::Shapes;
                herd.shape = Some(shape);
                // The seed's own herd: 10 in any rolling second, not a bucket's 10 then 1
                // every 100 ms.
                herd.provider.rolling_window = Some(Duration::from_secs(1));
                herd.provider.limit_headers = false;
                return herd;
            }
            Shape::Halved => provider.limit_change = Some((CHANGE_AT, 0.5)),
            Shape::Doubled => provider.limit_change = Some((CHANGE_AT, 2.0)),
            Shape::Bedrock | Shape::Vertex | Shape::Azure => {
                let (cloud, _) = shape.cloud().unwrap_or((Cloud::Any, ProviderStyle::Openai));
                // Short answers: what binds is the requests limit no header states (Azure's:
                // its windows').
                provider = cloud_provider(cloud);
                provider.completion_tokens = 16;
                for j in &mut job_list {
                    j.input_tokens = 100;
                    j.max_tokens = 16;
                }
                processes = 8;
                workers = 6;
            }
        }
        if matches!(shape, Shape::MaxInFlight | Shape::FixedWindow) {
            // Plain requests: what binds is the server's, not tokens.
            for j in &mut job_list {
                j.max_tokens = 50;
            }
        }
        if n < processes * workers {
            processes = processes.min(n).max(1);
            workers = workers.min(n.div_ceil(processes)).max(1);
        }
        Scenario {
            name: if shape.cloud().is_some() {
                ScenarioName::Clouds
            } else {
                ScenarioName::Shapes
            },
            provider,
            workers,
            jobs: deal(job_list, processes, None),
            calibration: None,
            hosts: 1,
            fleet: None,
            shape: Some(shape),
            fault: None,
            python_workers: shape.python(),
        }
    }

    /// The ideal wall time of a shape: what its provider allows (requests in flight, windows,
    /// the day's quota, limits that change) for the output it produces.
    pub(super) fn shape_ideal(&self, shape: Shape) -> Option<Duration> {
        let p = &self.provider;
        let latency = p.latency.as_secs_f64();
        let all: Vec<&Job> = self.jobs.iter().flatten().collect();
        let jobs = all.len() as f64;
        let secs = match shape {
            Shape::Herd => {
                // 10 at once, then 10 more each second.
                let w = p
                    .rolling_window
                    .unwrap_or(Duration::from_secs(1))
                    .as_secs_f64();
                let per = (p.limits.per_minute[0].unwrap_or(60.0) * w / 60.0)
                    .floor()
                    .max(1.0);
                ((jobs - per).max(0.0) / per).ceil() * w + latency
            }
            Shape::MaxInFlight => {
                let slots = p.max_in_flight.unwrap_or(1) as f64;
                if p.latency_spread > 0.0 {
                    // Answers of every length, the slots kept full: their time over the slots.
                    jobs * latency / slots
                } else {
                    (jobs / slots).ceil() * latency
                }
            }
            Shape::FixedWindow => {
                let window = p
                    .fixed_window
                    .unwrap_or(Duration::from_secs(60))
                    .as_secs_f64();
                let per_window = (p.limits.per_minute[0].unwrap_or(0.0) * window / 60.0).floor();
                ((jobs - per_window).max(0.0) / per_window.max(1.0)).ceil() * window + latency
            }
            _ => {
                // The jobs that can be done, their tokens as the provider charges them.
                let possible = p.requests_per_day.map_or(jobs, |d| jobs.min(d as f64));
                let share = possible / jobs.max(1.0);
                let tokens: f64 = all
                    .iter()
                    .map(|j| {
                        let out = if j.undeclared {
                            p.completion_tokens.min(j.max_tokens)
                        } else {
                            j.max_tokens
                        };
                        (j.input_tokens + out) as f64
                    })
                    .sum::<f64>()
                    * share;
                let l = &p.limits;
                let mut secs = 0f64;
                for (i, demand) in [possible, tokens].into_iter().enumerate() {
                    if let (Some(rate), Some(cap)) = (l.per_minute[i], l.capacity_of(i)) {
                        secs = secs.max(time_for(demand - cap, rate / 60.0, p.limit_change));
                    }
                }
                secs + latency
            }
        };
        Some(Duration::from_secs_f64(secs))
    }
}

/// Time to serve `demand` units at `per_sec`, the rate changing by a factor at a moment.
fn time_for(demand: f64, per_sec: f64, change: Option<(Duration, f64)>) -> f64 {
    let demand = demand.max(0.0);
    match change {
        Some((at, factor)) if demand / per_sec > at.as_secs_f64() => {
            let before = per_sec * at.as_secs_f64();
            at.as_secs_f64() + (demand - before) / (per_sec * factor)
        }
        _ => demand / per_sec,
    }
}

/// 100 requests per 5 s window (1200 a minute), no tokens limit, the headers saying only the
/// window's remaining and reset.
fn provider_fixed_window() -> ProviderConfig {
    let mut p = provider(1200.0, 100.0, None, RetryAfter::Seconds, false);
    p.fixed_window = Some(Duration::from_secs(5));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_has_its_ideal() {
        let in_flight = Scenario::shape(Shape::MaxInFlight, Some(300));
        // 300 answers of 0.3 s, 8 at a time.
        let ideal = in_flight.ideal().as_secs_f64();
        assert!((ideal - 300.0 * 0.3 / 8.0).abs() < 1e-6, "{ideal}");
        let window = Scenario::shape(Shape::FixedWindow, Some(300));
        assert!((window.ideal().as_secs_f64() - 10.05).abs() < 1e-6);
        let daily = Scenario::shape(Shape::DailyQuota, Some(300));
        // 100 possible, 5 at once then 20 a second (their tokens fit).
        assert!((daily.ideal().as_secs_f64() - (95.0 / 20.0 + 0.05)).abs() < 0.5);
        assert_eq!(
            time_for(300.0, 10.0, Some((Duration::from_secs(10), 2.0))),
            20.0
        );
        assert_eq!(
            time_for(200.0, 10.0, Some((Duration::from_secs(10), 2.0))),
            15.0
        );
        assert_eq!(
            time_for(50.0, 10.0, Some((Duration::from_secs(10), 2.0))),
            5.0
        );
        let herd = Scenario::shape(Shape::Herd, None);
        assert_eq!(herd.job_count(), 40);
        assert!((herd.ideal().as_secs_f64() - 3.05).abs() < 1e-6);
        assert_eq!(herd.label(), "herd");
        let undeclared = Scenario::shape(Shape::NoMaxTokens, Some(300));
        assert!(undeclared.jobs.iter().flatten().all(|j| j.undeclared));
        assert_eq!(undeclared.daemon_config(), "");
    }
}
