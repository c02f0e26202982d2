//! An upstream's answer passing through to the caller untouched, frame by frame as it arrives,
//! watched on the way: a stream's events (usage, an error inside the 200, whether output
//! reached the caller) or a JSON body's usage. When it ends, breaks, stalls past the read
//! timeout or the caller goes away, what was seen is handed to `on_end` once, to be reported.

use crate::rules::sse::StreamWatcher;
use crate::rules::stream_usage;
use crate::rules::usage::{body_usage, error_info, Usage};
use crate::upstream::BoxError;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// The most of a JSON answer kept to read its usage at the end.
pub const MAX_JSON_BYTES: usize = 8 << 20;

/// How a watched answer ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Complete,
    /// The caller went away before the end (the upstream request is cancelled with it).
    CallerGone,
    /// The upstream broke off: why.
    UpstreamBroke(String),
    /// The upstream sent nothing for the read timeout.
    TimedOut,
}

/// What a watched answer showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub ending: Ending,
    pub usage: Option<Usage>,
    /// An error the answer carried (inside a 200 stream, or a 2xx JSON body naming one), or
    /// what broke it: (type, message).
    pub error: Option<(String, String)>,
    /// Output had reached the caller before that error.
    pub stream_started: bool,
    pub bytes: u64,
}

enum Watch {
    Events(StreamWatcher),
    Json { kept: Vec<u8>, overflow: bool },
    Blind,
}

pub type OnEnd = Box<dyn FnOnce(Seen) + Send + Sync>;

pub struct Watched<B> {
    inner: B,
    /// The body's length when the upstream said it (content-length): all of it is the end.
    exact: Option<u64>,
    watch: Watch,
    idle: Duration,
    sleep: Pin<Box<Sleep>>,
    bytes: u64,
    on_end: Option<OnEnd>,
}

impl<B> Watched<B> {
    /// Watches `inner` as its content type says: server-sent events, JSON, or neither.
    pub fn new(inner: B, content_type: &str, idle: Duration, on_end: OnEnd) -> Watched<B>
    where
        B: Body,
    {
        let exact = inner.size_hint().exact();
        let ct = content_type.to_ascii_lowercase();
        let watch = if ct.starts_with("text/event-stream") {
            Watch::Events(StreamWatcher::new())
        } else if ct.contains("json") {
            Watch::Json {
                kept: Vec::new(),
                overflow: false,
            }
        } else {
            Watch::Blind
        };
        Watched {
            inner,
            exact,
            watch,
            idle,
            sleep: Box::pin(tokio::time::sleep(idle)),
            bytes: 0,
            on_end: Some(on_end),
        }
    }

    fn feed(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        match &mut self.watch {
            Watch::Events(w) => w.feed(data),
            Watch::Json { kept, overflow } => {
                if kept.len() + data.len() <= MAX_JSON_BYTES {
                    kept.extend_from_slice(data);
                } else {
                    *overflow = true;
                }
            }
            Watch::Blind => {}
        }
    }

    fn end(&mut self, ending: Ending) {
        let Some(on_end) = self.on_end.take() else {
            return;
        };
        let delivered = self.bytes > 0;
        let mut seen = Seen {
            ending: ending.clone(),
            usage: None,
            error: None,
            stream_started: false,
            bytes: self.bytes,
        };
        let mut ending = ending;
        match &mut self.watch {
            Watch::Events(w) => {
                let out = w.outcome(ending == Ending::Complete);
                // A caller that goes away after the stream's last event (Codex closes the
                // connection right after `response.completed`) had all of it: a success.
                if out.finished && ending == Ending::CallerGone {
                    ending = Ending::Complete;
                    seen.ending = Ending::Complete;
                }
                seen.usage = out.usage;
                seen.stream_started = if out.error.is_some() {
                    out.error_after_output
                } else {
                    out.output_seen
                };
                seen.error = out.error;
            }
            Watch::Json { kept, overflow } => {
                if ending == Ending::Complete && !*overflow {
                    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(kept) {
                        seen.usage = body_usage(&v);
                        seen.error = error_info(&v).filter(|(t, _)| !t.is_empty());
                    }
                }
                seen.stream_started = delivered;
            }
            Watch::Blind => seen.stream_started = delivered,
        }
        if seen.error.is_none() {
            seen.error = match &ending {
                Ending::Complete => None,
                Ending::CallerGone => Some((
                    "cancelled".into(),
                    "the caller went away before the answer ended".into(),
                )),
                Ending::UpstreamBroke(why) => Some(("connection".into(), why.clone())),
                Ending::TimedOut => Some((
                    "timeout".into(),
                    format!("the upstream sent nothing for {:?}", self.idle),
                )),
            };
        }
        on_end(seen);
    }
}

impl<B> Body for Watched<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if this.on_end.is_none() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let data = data.clone();
                    this.feed(&data);
                }
                let deadline = tokio::time::Instant::now() + this.idle;
                this.sleep.as_mut().reset(deadline);
                // A body of known length is complete with its last byte: the server writing it
                // may never ask for more.
                if this.inner.is_end_stream() || this.exact.is_some_and(|n| this.bytes >= n) {
                    this.end(Ending::Complete);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                let e: BoxError = e.into();
                this.end(Ending::UpstreamBroke(e.to_string()));
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.end(Ending::Complete);
                Poll::Ready(None)
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.end(Ending::TimedOut);
                    Poll::Ready(Some(Err(format!(
                        "the upstream sent nothing for {:?} (the proxy's read_timeout)",
                        this.idle
                    )
                    .into())))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.on_end.is_none() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Watched<B> {
    fn drop(&mut self) {
        // All of a body of known length went by (an empty one included): it was complete.
        let all = self.exact.is_some_and(|n| self.bytes >= n);
        self.end(if all {
            Ending::Complete
        } else {
            Ending::CallerGone
        });
    }
}

/// A stream whose usage was asked for on the caller's behalf, as the caller would have had it
/// (`rules::stream_usage`): whole events, the usage it did not ask for taken out.
pub struct Unasked<B> {
    inner: B,
    filter: stream_usage::Unasked,
    done: bool,
}

impl<B> Unasked<B> {
    pub fn new(inner: B) -> Unasked<B> {
        Unasked {
            inner,
            filter: stream_usage::Unasked::default(),
            done: false,
        }
    }
}

impl<B> Body for Unasked<B>
where
    B: Body<Data = Bytes, Error = BoxError> + Unpin,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let out = this.filter.feed(&data);
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.done = true;
                    let rest = this.filter.finish();
                    if !rest.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(rest)))));
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// A stream of unknown length that sends its chunks and then nothing more (the upstream
    /// keeping the connection open).
    struct Chunks(VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = BoxError;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
            match self.0.pop_front() {
                Some(b) => Poll::Ready(Some(Ok(Frame::data(b)))),
                None => Poll::Pending,
            }
        }
    }

    /// What a caller that reads `events` and then goes away leaves to be reported.
    async fn seen_after(events: &[&str]) -> Seen {
        let chunks = events.iter().map(|e| Bytes::from(e.to_string())).collect();
        let got: Arc<Mutex<Option<Seen>>> = Arc::default();
        let put = got.clone();
        let mut body = Watched::new(
            Chunks(chunks),
            "text/event-stream",
            Duration::from_secs(60),
            Box::new(move |s| *put.lock().expect("lock") = Some(s)),
        );
        for _ in events {
            body.frame().await.expect("a frame").expect("data");
        }
        drop(body);
        let seen = got.lock().expect("lock").take();
        seen.expect("reported once dropped")
    }

    const DELTA: &str = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n";
    const COMPLETED: &str = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":2,\"total_tokens\":7}}}\n\n";

    #[tokio::test]
    async fn a_caller_gone_after_the_streams_last_event_had_a_success() {
        let seen = seen_after(&[DELTA, COMPLETED]).await;
        assert_eq!(seen.ending, Ending::Complete);
        assert_eq!(seen.error, None);
        assert!(seen.usage.is_some(), "usage read: {seen:?}");
        for last in [
            "data: [DONE]\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ] {
            assert_eq!(seen_after(&[DELTA, last]).await.ending, Ending::Complete);
        }
    }

    #[tokio::test]
    async fn a_caller_gone_mid_stream_is_a_cancellation() {
        let seen = seen_after(&[DELTA]).await;
        assert_eq!(seen.ending, Ending::CallerGone);
        assert_eq!(seen.error.map(|e| e.0).as_deref(), Some("cancelled"));
    }
}
