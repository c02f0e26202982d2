//! The calibrate matrix: the incident workload through llmctl with the daemon told the limits
//! exactly, not at all, doubled or halved, against providers that speak of their limits in
//! OpenAI's, Anthropic's or no headers, and with another consumer of the key.

use super::*;

/// How a calibrate run's provider speaks of its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderStyle {
    /// `x-ratelimit-*` headers, max_tokens charged at admission.
    Openai,
    /// `anthropic-ratelimit-*` headers (whole-second resets, tokens rounded to thousands),
    /// output counted as produced.
    Anthropic,
    /// OpenAI-shaped answers without any limit header, as Gemini, vLLM and most
    /// OpenAI-compatible servers.
    Headerless,
    /// Amazon Bedrock's Converse (`/model/{id}/converse`), the model in the path.
    Bedrock,
    /// Gemini on Vertex AI (`…/publishers/google/models/{model}:generateContent`).
    Vertex,
    /// An Azure OpenAI deployment (`/openai/deployments/{name}/chat/completions`).
    Azure,
}

impl ProviderStyle {
    pub const ALL: [ProviderStyle; 3] = [
        ProviderStyle::Openai,
        ProviderStyle::Anthropic,
        ProviderStyle::Headerless,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProviderStyle::Openai => "openai",
            ProviderStyle::Anthropic => "anthropic",
            ProviderStyle::Headerless => "headerless",
            ProviderStyle::Bedrock => "bedrock",
            ProviderStyle::Vertex => "vertex",
            ProviderStyle::Azure => "azure",
        }
    }
}

/// What a calibrate run's daemon is told of the provider's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonLimits {
    Exact,
    /// No limits configured at all.
    None,
    /// Twice the real tier.
    Double,
    /// Half of it: the user leaves room for others.
    Half,
}

impl DaemonLimits {
    pub const ALL: [DaemonLimits; 4] = [
        DaemonLimits::Exact,
        DaemonLimits::None,
        DaemonLimits::Double,
        DaemonLimits::Half,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DaemonLimits::Exact => "exact",
            DaemonLimits::None => "none",
            DaemonLimits::Double => "double",
            DaemonLimits::Half => "half",
        }
    }

    fn factor(self) -> Option<f64> {
        match self {
            DaemonLimits::Exact => Some(1.0),
            DaemonLimits::None => None,
            DaemonLimits::Double => Some(2.0),
            DaemonLimits::Half => Some(0.5),
        }
    }
}

/// One row of the calibrate matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    pub style: ProviderStyle,
    pub limits: DaemonLimits,
    /// Another consumer's share of every limit.
    pub external_share: f64,
}

impl Scenario {
    /// The calibrate matrix: every provider style with every kind of daemon limits, then an
    /// OpenAI-style provider whose key another consumer shares at 30 %.
    pub fn calibrate_matrix(jobs: Option<usize>) -> Vec<Scenario> {
        let mut rows = Vec::new();
        for style in ProviderStyle::ALL {
            for limits in DaemonLimits::ALL {
                rows.push(Self::calibrate(
                    Calibration {
                        style,
                        limits,
                        external_share: 0.0,
                    },
                    jobs,
                ));
            }
        }
        rows.push(Self::calibrate(
            Calibration {
                style: ProviderStyle::Openai,
                limits: DaemonLimits::Exact,
                external_share: 0.3,
            },
            jobs,
        ));
        rows
    }

    /// The incident workload: 8 x 12 workers, 300 jobs, rejected requests counted, against a
    /// provider at 20 requests/s with a burst of 5 and 25k tokens/s with a 2 s burst, so that
    /// both limits bind (the jobs ask for about 26k tokens/s at 20 requests/s).
    pub fn calibrate(calibration: Calibration, jobs: Option<usize>) -> Scenario {
        let mut rng = Rng::with_seed(0x5eed_1234_abcd_ef01);
        let mut provider = provider(
            1200.0,
            5.0,
            Some((1_500_000.0, 50_000.0)),
            RetryAfter::Seconds,
            true,
        );
        provider.limit_headers = calibration.style != ProviderStyle::Headerless;
        provider.external_share = calibration.external_share;
        Scenario {
            name: ScenarioName::Calibrate,
            provider,
            workers: 12,
            jobs: deal(mixed_jobs(jobs.unwrap_or(300), &mut rng), 8, None),
            calibration: Some(calibration),
            hosts: 1,
            fleet: None,
            shape: None,
            fault: None,
            python_workers: false,
        }
    }

    /// The scenario's name in results: calibrate rows name their provider and daemon limits.
    pub fn label(&self) -> String {
        if let Some(fault) = self.fault {
            return format!("fleet-faults/{}", fault.name());
        }
        if let Some(load) = self.fleet {
            return format!("fleet/{}", load.name());
        }
        if let Some(shape) = self.shape {
            return shape.name().to_string();
        }
        match self.calibration {
            None => self.name.name().to_string(),
            Some(c) => {
                let mut l = format!("{}/{}", c.style.name(), c.limits.name());
                if c.external_share > 0.0 {
                    l += &format!("+{:.0}%ext", c.external_share * 100.0);
                }
                l
            }
        }
    }

    /// The limits the run may use: the provider's, less another consumer's share, and no
    /// more than the daemon is told when it is told less.
    pub fn allowed(&self) -> Limits {
        let mut l = self.provider.limits.clone();
        let ext = self.provider.external_share;
        for i in 0..4 {
            let cap = l.capacity_of(i);
            l.per_minute[i] = l.per_minute[i].map(|r| r * (1.0 - ext));
            l.burst[i] = cap;
            if let (Some(f), Some(r), Some(c)) = (
                self.calibration.and_then(|c| c.limits.factor()),
                l.per_minute[i],
                cap,
            ) {
                if f < 1.0 {
                    l.per_minute[i] =
                        Some(r.min(self.provider.limits.per_minute[i].unwrap_or(r) * f));
                    l.burst[i] = Some(c.min((c * f).ceil()));
                }
            }
        }
        l
    }

    /// The daemon config of a calibrate row: the provider's limits as exact, missing, doubled or
    /// halved, without saying how output is counted.
    pub(super) fn calibrate_config(&self, c: Calibration) -> String {
        let Some(f) = c.limits.factor() else {
            return String::new();
        };
        let l = &self.provider.limits;
        let mut s = String::from("[keys.\"sim/model\"]\n");
        for (i, word) in [(0, "requests"), (1, "tokens")] {
            if let (Some(r), Some(cap)) = (l.per_minute[i], l.capacity_of(i)) {
                s += &format!(
                    "{word}_per_minute = {}\nburst_{word} = {}\n",
                    (r * f).round() as u64,
                    (cap * f).ceil() as u64
                );
            }
        }
        s
    }
}
