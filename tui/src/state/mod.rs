//! What the dashboard knows, with no terminal in sight: the latest status from the Watch stream,
//! a short history per key, and what the operator chose (selection, sort, filter, pause, help).

mod history;

pub use history::{
    samples_per_key, ChartLine, History, Metric, Reading, Sample, MAX_SAMPLES, MIN_SAMPLES,
    SAMPLE_BUDGET, WINDOW_MS,
};

/// How far back the charts look: `t` cycles through them.
pub const CHART_WINDOWS_MS: [i64; 3] = [60_000, 5 * 60_000, 15 * 60_000];

use llmctl_proto::v1 as pb;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

/// A key whose 429 count grew within this many milliseconds of the newest message stands out.
pub const RISING_WINDOW_MS: i64 = 30_000;

#[derive(Clone, Debug, PartialEq)]
pub enum Connection {
    /// Before the first answer.
    Connecting,
    Connected,
    /// The daemon went away or never answered; the feed tries again by itself.
    Disconnected {
        reason: String,
        retry_in: Duration,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortOrder {
    #[default]
    Name,
    /// Keys in cooldown first, then by 429s per minute.
    RateLimited,
    RequestsPerSecond,
    QueueWait,
    QueueDepth,
    /// The fullest bucket first.
    Usage,
}

impl SortOrder {
    pub fn next(self) -> SortOrder {
        match self {
            SortOrder::Name => SortOrder::RateLimited,
            SortOrder::RateLimited => SortOrder::RequestsPerSecond,
            SortOrder::RequestsPerSecond => SortOrder::QueueWait,
            SortOrder::QueueWait => SortOrder::QueueDepth,
            SortOrder::QueueDepth => SortOrder::Usage,
            SortOrder::Usage => SortOrder::Name,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortOrder::Name => "name",
            SortOrder::RateLimited => "429s",
            SortOrder::RequestsPerSecond => "req/s",
            SortOrder::QueueWait => "wait p95",
            SortOrder::QueueDepth => "queue",
            SortOrder::Usage => "usage",
        }
    }
}

/// How much a key needs the operator's eye.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Alert {
    None,
    /// 429s reported within the last RISING_WINDOW_MS.
    Rising429s,
    /// Nothing is granted on it until the cooldown ends.
    Cooldown,
}

/// What the operator asked for; the view maps keys to these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    SelectPrevious,
    SelectNext,
    CycleSort,
    StartFilter,
    FilterInput(char),
    FilterBackspace,
    /// Keep the filter typed so far and stop editing it.
    FilterConfirm,
    /// Stop editing and drop the filter.
    FilterCancel,
    TogglePause,
    ToggleHelp,
    /// Show who spends the quota (clients and runs) instead of the selected key's detail.
    ToggleClients,
    /// The charts look back 1, 5 or 15 minutes.
    CycleWindow,
}

/// One key as the table shows it: the daemon's figures plus what the dashboard derives.
#[derive(Clone, Debug)]
pub struct KeyRow<'a> {
    pub status: &'a pb::KeyStatus,
    pub alert: Alert,
    /// Share of the tightest requests bucket in use (1.0 = empty bucket; above 1 is debt).
    pub requests_used: Option<f64>,
    /// The same over the tokens, input_tokens and output_tokens buckets.
    pub tokens_used: Option<f64>,
    /// Cooldown left now, counting the time since the message arrived.
    pub cooldown_left: Duration,
}

/// Sums over every key.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub keys: usize,
    pub requests_per_second: f64,
    pub rate_limited_per_minute: f64,
    pub queue_depth: i64,
    pub in_flight: i64,
}

/// Share of a bucket in use: what is missing from its capacity; debt shows above 100 %, up to
/// 999 % (a refusal empties a bucket until its cooldown ends, which can be many times its
/// capacity: its level says how deep).
pub fn bucket_used(b: &pb::Bucket) -> Option<f64> {
    (b.capacity > 0.0).then(|| ((b.capacity - b.level) / b.capacity).min(MAX_USED))
}

/// The most a share of use shows: it fits the table's column.
pub const MAX_USED: f64 = 9.99;

fn tightest<'a>(buckets: impl Iterator<Item = &'a pb::Bucket>) -> Option<f64> {
    buckets.filter_map(bucket_used).reduce(f64::max)
}

/// True when `ancestor` is `key` or one of the keys above it.
fn covers(ancestor: &str, key: &str) -> bool {
    key == ancestor
        || key
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn reading(k: &pb::KeyStatus) -> Reading {
    // The tightest per-minute limit of a dimension, as the charts draw it.
    let limit = |tokens: bool| {
        k.buckets
            .iter()
            .filter(|b| b.period_kind() == Some(pb::Period::Minute))
            .filter(|b| {
                let want = if tokens {
                    pb::Dimension::Tokens
                } else {
                    pb::Dimension::Requests
                };
                b.dimension_kind() == Some(want)
            })
            .map(|b| b.limit)
            .filter(|l| *l > 0.0)
            .reduce(f64::min)
            .unwrap_or(0.0)
    };
    Reading {
        requests_per_second: k.requests_per_second,
        rate_limited_total: k.rate_limited_total.max(0) as u64,
        queue_wait_p50_ms: k.queue_wait_p50_ms.max(0) as u64,
        queue_wait_p95_ms: k.queue_wait_p95_ms.max(0) as u64,
        queue_depth: k.queue_depth.max(0) as u64,
        tokens_reserved_total: k.tokens_reserved.max(0) as u64,
        tokens_used_total: k.tokens_used.max(0) as u64,
        fallbacks_total: k.fallbacks_total.max(0) as u64,
        requests_limit_per_second: limit(false) / 60.0,
        tokens_limit_per_minute: limit(true),
    }
}

#[derive(Debug)]
pub struct Dashboard {
    socket: String,
    connection: Connection,
    /// When `tick` last ran.
    last_tick: Option<Instant>,
    status: Option<pb::StatusResponse>,
    /// The newest message that arrived while paused, applied on resume.
    held: Option<pb::StatusResponse>,
    applied_at: Option<Instant>,
    since_message: Duration,
    histories: BTreeMap<String, History>,
    totals_history: History,
    selected: Option<String>,
    sort: SortOrder,
    filter: String,
    editing_filter: bool,
    paused: bool,
    help: bool,
    clients: bool,
    /// Index into CHART_WINDOWS_MS.
    window: usize,
    quit: bool,
}

impl Dashboard {
    /// `socket` is shown until the daemon names its own.
    pub fn new(socket: impl Into<String>) -> Dashboard {
        Dashboard {
            socket: socket.into(),
            connection: Connection::Connecting,
            last_tick: None,
            status: None,
            held: None,
            applied_at: None,
            since_message: Duration::ZERO,
            histories: BTreeMap::new(),
            totals_history: History::default(),
            selected: None,
            sort: SortOrder::default(),
            filter: String::new(),
            editing_filter: false,
            paused: false,
            help: false,
            clients: false,
            window: 1,
            quit: false,
        }
    }

    /// Takes in one Watch message (held back while paused).
    pub fn apply_status(&mut self, status: pb::StatusResponse, now: Instant) {
        self.connection = Connection::Connected;
        if self.paused {
            self.held = Some(status);
            return;
        }
        self.record(&status);
        self.status = Some(status);
        self.applied_at = Some(now);
        self.since_message = Duration::ZERO;
        self.keep_selection_visible();
    }

    fn record(&mut self, status: &pb::StatusResponse) {
        let t = status.now_unix_ms;
        let keep = samples_per_key(status.keys.len());
        let mut sum = Reading::default();
        for k in &status.keys {
            let r = reading(k);
            self.histories
                .entry(k.key.clone())
                .or_default()
                .record_bounded(t, r, keep);
            sum.requests_per_second += r.requests_per_second;
            sum.rate_limited_total += r.rate_limited_total;
            sum.queue_wait_p95_ms = sum.queue_wait_p95_ms.max(r.queue_wait_p95_ms);
            sum.queue_depth += r.queue_depth;
            sum.tokens_reserved_total += r.tokens_reserved_total;
            sum.tokens_used_total += r.tokens_used_total;
            sum.fallbacks_total += r.fallbacks_total;
            sum.queue_wait_p50_ms = sum.queue_wait_p50_ms.max(r.queue_wait_p50_ms);
        }
        // A key the daemon no longer reports has no history worth keeping.
        let present: HashSet<&str> = status.keys.iter().map(|k| k.key.as_str()).collect();
        self.histories
            .retain(|name, _| present.contains(name.as_str()));
        self.totals_history.record(t, sum);
    }

    pub fn set_connection(&mut self, connection: Connection) {
        self.connection = connection;
    }

    /// Moves the countdowns on between messages.
    pub fn tick(&mut self, now: Instant) {
        if let Some(at) = self.applied_at {
            if !self.paused {
                self.since_message = now.saturating_duration_since(at);
            }
        }
        // The disconnected banner counts down to the next try.
        let elapsed = self
            .last_tick
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        self.last_tick = Some(now);
        if let Connection::Disconnected { retry_in, .. } = &mut self.connection {
            *retry_in = retry_in.saturating_sub(elapsed);
        }
    }

    pub fn handle(&mut self, action: Action) {
        match action {
            Action::Quit => self.quit = true,
            Action::SelectPrevious => self.move_selection(-1),
            Action::SelectNext => self.move_selection(1),
            Action::CycleSort => self.sort = self.sort.next(),
            Action::StartFilter => {
                self.editing_filter = true;
                self.help = false;
            }
            Action::FilterInput(c) => {
                self.filter.push(c);
                self.keep_selection_visible();
            }
            Action::FilterBackspace => {
                self.filter.pop();
                self.keep_selection_visible();
            }
            Action::FilterConfirm => self.editing_filter = false,
            Action::FilterCancel => {
                self.editing_filter = false;
                self.filter.clear();
                self.keep_selection_visible();
            }
            Action::TogglePause => {
                self.paused = !self.paused;
                if !self.paused {
                    if let Some(held) = self.held.take() {
                        self.apply_status(held, Instant::now());
                    }
                }
            }
            Action::ToggleHelp => self.help = !self.help,
            Action::ToggleClients => self.clients = !self.clients,
            Action::CycleWindow => self.window = (self.window + 1) % CHART_WINDOWS_MS.len(),
        }
    }

    fn move_selection(&mut self, by: isize) {
        let names: Vec<String> = self.rows().iter().map(|r| r.status.key.clone()).collect();
        if names.is_empty() {
            return;
        }
        let at = self
            .selected
            .as_ref()
            .and_then(|s| names.iter().position(|n| n == s));
        let next = match at {
            Some(i) => i.saturating_add_signed(by).min(names.len() - 1),
            None => 0,
        };
        self.selected = Some(names[next].clone());
    }

    /// After the rows change, the selection stays on its key when visible, else the first row.
    fn keep_selection_visible(&mut self) {
        let rows = self.rows();
        let visible = self
            .selected
            .as_ref()
            .is_some_and(|s| rows.iter().any(|r| &r.status.key == s));
        if !visible {
            self.selected = rows.first().map(|r| r.status.key.clone());
        }
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    pub fn socket(&self) -> &str {
        match &self.status {
            Some(s) if !s.socket.is_empty() => &s.socket,
            _ => &self.socket,
        }
    }

    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    pub fn status(&self) -> Option<&pb::StatusResponse> {
        self.status.as_ref()
    }

    pub fn sort(&self) -> SortOrder {
        self.sort
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    pub fn editing_filter(&self) -> bool {
        self.editing_filter
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    pub fn help(&self) -> bool {
        self.help
    }

    /// How far back the charts look, in milliseconds.
    pub fn chart_window_ms(&self) -> i64 {
        CHART_WINDOWS_MS[self.window]
    }

    /// The clients panel is shown instead of the detail.
    pub fn clients(&self) -> bool {
        self.clients
    }

    pub fn selected(&self) -> Option<&str> {
        self.selected.as_deref()
    }

    pub fn uptime(&self) -> Option<Duration> {
        let s = self.status.as_ref()?;
        let ms = s.now_unix_ms.saturating_sub(s.started_unix_ms).max(0) as u64;
        Some(Duration::from_millis(ms) + self.since_message)
    }

    /// The fleet this daemon belongs to, if any.
    pub fn fleet(&self) -> Option<&llmctl_proto::v1::FleetStatus> {
        self.status.as_ref().and_then(|s| s.fleet.as_ref())
    }

    pub fn sessions(&self) -> Option<i64> {
        self.status.as_ref().map(|s| s.sessions)
    }

    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for k in self.status.iter().flat_map(|s| &s.keys) {
            t.keys += 1;
            t.requests_per_second += k.requests_per_second;
            t.rate_limited_per_minute += k.rate_limited_per_minute;
            t.queue_depth += k.queue_depth;
            t.in_flight += k.in_flight;
        }
        t
    }

    pub fn totals_history(&self) -> &History {
        &self.totals_history
    }

    pub fn history(&self, key: &str) -> Option<&History> {
        self.histories.get(key)
    }

    fn row<'a>(&'a self, k: &'a pb::KeyStatus) -> KeyRow<'a> {
        let cooldown_left = Duration::from_millis(k.cooldown_remaining_ms.max(0) as u64)
            .saturating_sub(self.since_message);
        let history = self.histories.get(&k.key);
        // With a single message there is nothing to compare; the daemon's last minute will do.
        let rising = match history {
            Some(h) if h.len() > 1 => h.rate_limited_within(RISING_WINDOW_MS) > 0,
            _ => k.rate_limited_per_minute > 0.0,
        };
        let alert = if !cooldown_left.is_zero() {
            Alert::Cooldown
        } else if rising {
            Alert::Rising429s
        } else {
            Alert::None
        };
        KeyRow {
            status: k,
            alert,
            requests_used: tightest(
                k.buckets
                    .iter()
                    .filter(|b| b.dimension_kind() == Some(pb::Dimension::Requests)),
            ),
            tokens_used: tightest(
                k.buckets
                    .iter()
                    .filter(|b| b.dimension_kind().is_some_and(pb::Dimension::is_tokens)),
            ),
            cooldown_left,
        }
    }

    /// The keys the table shows: filtered, then sorted.
    pub fn rows(&self) -> Vec<KeyRow<'_>> {
        let needle = self.filter.to_lowercase();
        let mut rows: Vec<KeyRow<'_>> = self
            .status
            .iter()
            .flat_map(|s| &s.keys)
            .filter(|k| needle.is_empty() || k.key.to_lowercase().contains(&needle))
            .map(|k| self.row(k))
            .collect();
        let desc = |a: f64, b: f64| b.total_cmp(&a);
        match self.sort {
            SortOrder::Name => {}
            SortOrder::RateLimited => rows.sort_by(|a, b| {
                b.alert.cmp(&a.alert).then(desc(
                    a.status.rate_limited_per_minute,
                    b.status.rate_limited_per_minute,
                ))
            }),
            SortOrder::RequestsPerSecond => rows
                .sort_by(|a, b| desc(a.status.requests_per_second, b.status.requests_per_second)),
            SortOrder::QueueWait => {
                rows.sort_by_key(|r| std::cmp::Reverse(r.status.queue_wait_p95_ms))
            }
            SortOrder::QueueDepth => rows.sort_by_key(|r| std::cmp::Reverse(r.status.queue_depth)),
            SortOrder::Usage => rows.sort_by(|a, b| {
                let most = |r: &KeyRow| {
                    r.requests_used
                        .unwrap_or(0.0)
                        .max(r.tokens_used.unwrap_or(0.0))
                };
                desc(most(a), most(b))
            }),
        }
        // The daemon sends keys sorted by name, and the sorts above are stable, so ties stay
        // in name order.
        rows
    }

    /// The selected key's row, if any key is visible.
    pub fn selected_row(&self) -> Option<KeyRow<'_>> {
        let name = self.selected.as_deref()?;
        let k = self.status.as_ref()?.keys.iter().find(|k| k.key == name)?;
        Some(self.row(k))
    }

    /// Events about `key`, a key above it (whose cooldown holds it too) or below it, newest first.
    pub fn events_for(&self, key: &str) -> Vec<&pb::Event> {
        self.status
            .iter()
            .flat_map(|s| s.events.iter().rev())
            .filter(|e| covers(&e.key, key) || covers(key, &e.key))
            .collect()
    }

    /// Milliseconds since the Unix epoch according to the daemon, as of now.
    pub fn now_unix_ms(&self) -> Option<i64> {
        self.status
            .as_ref()
            .map(|s| s.now_unix_ms + self.since_message.as_millis() as i64)
    }
}

#[cfg(test)]
mod tests;
