//! `llmctl fake-provider`: serve the fake provider until SIGINT/SIGTERM.

use crate::exit;
use clap::{Args, ValueEnum};
use llmctl_sim::provider::{
    faults, Cloud, FakeProvider, Fault, Limits, ProviderConfig, QuotaStyle, RetryAfter,
};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum RetryAfterArg {
    /// `retry-after: <seconds>` (OpenAI also gets `retry-after-ms`)
    Seconds,
    /// `retry-after: <HTTP-date>`
    Date,
    /// no delay in headers or message
    None,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum QuotaStyleArg {
    /// "… on requests per day (RPD): Limit N, Used N … Please try again in 7h12m0s."
    Openai,
    /// RESOURCE_EXHAUSTED, a QuotaFailure with quotaId …PerDay… and a retryDelay of 20s
    Gemini,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CloudArg {
    /// each route as its API answers it
    Any,
    /// Amazon Bedrock: no limit headers, a ThrottlingException that names no delay
    Bedrock,
    /// Vertex AI: no limit headers, a RESOURCE_EXHAUSTED that names no delay
    Vertex,
    /// Azure OpenAI: --rpm counted over one-second windows (unless --fixed-window or
    /// --rolling-window says otherwise), retry-after-ms on its deployments' 429s
    Azure,
}

#[derive(Args, Debug)]
pub struct FakeArgs {
    /// Limit as this cloud does, over every route (Bedrock's /model/{id}/…, Vertex AI's
    /// …/publishers/…, Azure's /openai/deployments/…; the others as they are)
    #[arg(long, value_enum, default_value = "any")]
    api: CloudArg,
    /// Address to serve on; loopback only (port 0 picks a free one)
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    listen: SocketAddr,
    /// Requests per minute [default: unlimited]
    #[arg(long, value_name = "N")]
    rpm: Option<u64>,
    /// Tokens (input + output) per minute
    #[arg(long, value_name = "N")]
    tpm: Option<u64>,
    /// Input tokens per minute
    #[arg(long, value_name = "N")]
    itpm: Option<u64>,
    /// Output tokens per minute
    #[arg(long, value_name = "N")]
    otpm: Option<u64>,
    /// Requests bucket capacity [default: one second of requests, at least 1]
    #[arg(long, value_name = "N")]
    burst_requests: Option<u64>,
    /// Tokens bucket capacity [default: one minute of tokens]
    #[arg(long, value_name = "N")]
    burst_tokens: Option<u64>,
    /// Input tokens bucket capacity [default: one minute]
    #[arg(long, value_name = "N")]
    burst_input_tokens: Option<u64>,
    /// Output tokens bucket capacity [default: one minute]
    #[arg(long, value_name = "N")]
    burst_output_tokens: Option<u64>,
    /// Count rejected requests against the requests limit, as OpenAI does
    #[arg(long)]
    count_rejected: bool,
    /// How 429s say when to come back
    #[arg(long, value_enum, default_value = "seconds")]
    retry_after: RetryAfterArg,
    /// Time to produce an answer
    #[arg(long, default_value = "20ms", value_parser = super::duration, value_name = "DUR")]
    latency: Duration,
    /// Draw each answer's time uniformly from --latency x (1 - F .. 1 + F), as real servers'
    /// answers vary (0 to 1; 0.5: from half to one and a half times --latency)
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    latency_spread: f64,
    /// Time between two events of a streamed answer
    #[arg(long, default_value = "0ms", value_parser = super::duration, value_name = "DUR")]
    stream_interval: Duration,
    /// Output tokens per answer (capped by the request's max_tokens)
    #[arg(long, default_value_t = 16, value_name = "N")]
    completion_tokens: u64,
    /// Share of input tokens reported as read from cache (0 to 1)
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    cache_share: f64,
    /// A fault: status=503,share=0.1 | insufficient_quota | rate_limit,retry_after=2 | slow=5s |
    /// stream_error=overloaded_error,after_tokens=3; options share=F, count=N (repeatable)
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<String>,
    /// A file of faults, one per line, each optionally after a window like 5s..10s
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Send no rate-limit headers, as Gemini, vLLM and most OpenAI-compatible servers do
    #[arg(long)]
    no_limit_headers: bool,
    /// Another consumer of the same key takes this share of every limit (0 to 1, below 1)
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    external_share: f64,
    /// Refuse requests beyond this many in flight, with a 429 that says so (self-hosted
    /// servers, a LiteLLM proxy's max_parallel_requests)
    #[arg(long, value_name = "N")]
    max_in_flight: Option<u64>,
    /// Count --rpm in fixed windows of this length (each allowing its share of a minute); the
    /// headers then say only the window's remaining and reset, as a LiteLLM proxy's
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    fixed_window: Option<Duration>,
    /// Admit this many requests a day; past them refuse every request as a daily quota
    #[arg(long, value_name = "N")]
    requests_per_day: Option<u64>,
    /// How a daily quota's refusal reads
    #[arg(long, value_enum, default_value = "openai")]
    quota_style: QuotaStyleArg,
    /// Count --rpm over a rolling window of this length (at most its share of a minute in any
    /// such window, a sliding log) instead of a continuously refilled bucket
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    rolling_window: Option<Duration>,
    /// After DUR, every limit times F: a tier halved (0.5) or doubled (2) mid-run ("8s:0.5")
    #[arg(long, value_name = "DUR:F")]
    scale_limits: Option<String>,
    /// Answer 400 to a request with stream_options, as older Azure api-versions and some
    /// OpenAI-compatible servers do
    #[arg(long)]
    refuse_stream_options: bool,
    /// A subscription plan's window: N requests per DUR ("30/5h"), every answer carrying the
    /// plan's headers (Anthropic's unified, Codex's x-codex-*) and every request past N refused
    /// as the plan's until the window resets
    #[arg(long, value_name = "N/DUR")]
    plan_window: Option<String>,
}

/// `N/DUR` of --plan-window.
fn plan_window(spec: &str) -> Result<(u64, Duration), String> {
    let bad = || {
        format!("--plan-window {spec:?}: give requests per window, like 30/5h (30 requests per 5-hour window)")
    };
    let (n, length) = spec.split_once('/').ok_or_else(bad)?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    let length = super::duration(length.trim()).map_err(|_| bad())?;
    if n == 0 || length < Duration::from_secs(1) {
        return Err(bad());
    }
    Ok((n, length))
}

/// `DUR:F` of --scale-limits.
fn scale_limits(spec: &str) -> Result<(Duration, f64), String> {
    let bad = || {
        format!("--scale-limits {spec:?}: give when and by how much, like 8s:0.5 (halved 8 s in) or 8s:2")
    };
    let (at, factor) = spec.split_once(':').ok_or_else(bad)?;
    let at = super::duration(at).map_err(|_| bad())?;
    let factor: f64 = factor.parse().map_err(|_| bad())?;
    if !(factor.is_finite() && factor > 0.0 && factor <= 100.0) {
        return Err(bad());
    }
    Ok((at, factor))
}

impl FakeArgs {
    pub fn config(&self) -> Result<ProviderConfig, String> {
        let mut faults_list = self
            .faults
            .iter()
            .map(|s| Fault::parse(s).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(path) = &self.script {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read --script {}: {e}", path.display()))?;
            faults_list.extend(
                faults::parse_script(&text)
                    .map_err(|e| format!("--script {}: {e}", path.display()))?,
            );
        }
        if !(0.0..=1.0).contains(&self.cache_share) {
            return Err(format!(
                "--cache-share {} must be from 0 to 1",
                self.cache_share
            ));
        }
        if !(0.0..=1.0).contains(&self.latency_spread) {
            return Err(format!(
                "--latency-spread {} must be from 0 to 1 (0.5 draws each answer's time from half to one and a half times --latency)",
                self.latency_spread
            ));
        }
        if !(0.0..1.0).contains(&self.external_share) {
            return Err(format!(
                "--external-share {} must be from 0 to below 1 (the share of every limit another consumer takes)",
                self.external_share
            ));
        }
        let f = |v: Option<u64>| v.map(|n| n as f64);
        if self.fixed_window.is_some() && self.rpm.is_none() {
            return Err("--fixed-window counts --rpm in windows; give --rpm too".into());
        }
        if self.rolling_window.is_some() && (self.rpm.is_none() || self.fixed_window.is_some()) {
            return Err("--rolling-window counts --rpm over a rolling window; give --rpm, and not --fixed-window with it".into());
        }
        if self.fixed_window.is_some_and(|w| w.is_zero())
            || self.rolling_window.is_some_and(|w| w.is_zero())
        {
            return Err("--fixed-window 0 is no window; give one like 5s or 1m".into());
        }
        for (name, v) in [
            ("--max-in-flight", self.max_in_flight),
            ("--requests-per-day", self.requests_per_day),
            ("--rpm", self.rpm),
            ("--tpm", self.tpm),
            ("--itpm", self.itpm),
            ("--otpm", self.otpm),
        ] {
            if v == Some(0) {
                return Err(format!("{name} 0 would refuse everything; give at least 1, or leave it out for no limit"));
            }
        }
        Ok(ProviderConfig {
            limits: Limits {
                per_minute: [f(self.rpm), f(self.tpm), f(self.itpm), f(self.otpm)],
                burst: [
                    f(self.burst_requests),
                    f(self.burst_tokens),
                    f(self.burst_input_tokens),
                    f(self.burst_output_tokens),
                ],
            },
            count_rejected: self.count_rejected,
            retry_after: match self.retry_after {
                RetryAfterArg::Seconds => RetryAfter::Seconds,
                RetryAfterArg::Date => RetryAfter::Date,
                RetryAfterArg::None => RetryAfter::None,
            },
            latency: self.latency,
            latency_spread: self.latency_spread,
            stream_interval: self.stream_interval,
            completion_tokens: self.completion_tokens,
            cache_share: self.cache_share,
            faults: faults_list,
            limit_headers: !self.no_limit_headers,
            external_share: self.external_share,
            max_in_flight: self.max_in_flight,
            fixed_window: self.fixed_window,
            requests_per_day: self.requests_per_day,
            quota_style: match self.quota_style {
                QuotaStyleArg::Openai => QuotaStyle::Openai,
                QuotaStyleArg::Gemini => QuotaStyle::Gemini,
            },
            limit_change: self.scale_limits.as_deref().map(scale_limits).transpose()?,
            rolling_window: self.rolling_window,
            plan_window: self.plan_window.as_deref().map(plan_window).transpose()?,
            refuse_stream_options: self.refuse_stream_options,
        }
        .as_cloud(match self.api {
            CloudArg::Any => Cloud::Any,
            CloudArg::Bedrock => Cloud::Bedrock,
            CloudArg::Vertex => Cloud::Vertex,
            CloudArg::Azure => Cloud::Azure,
        }))
    }
}

pub async fn run(args: FakeArgs) -> ExitCode {
    let config = match args.config() {
        Ok(c) => c,
        Err(e) => return exit::fail(exit::USAGE, e),
    };
    let provider = match FakeProvider::start(config, args.listen).await {
        Ok(p) => p,
        Err(e) => return exit::fail(exit::USAGE, format!("cannot serve on {}: {e}", args.listen)),
    };
    println!("listening on {}", provider.url());
    let _ = std::io::stdout().flush();
    super::daemon::stop_signal().await;
    ExitCode::SUCCESS
}
