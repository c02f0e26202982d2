//! A limited request's body read whole within the body budget (`max_body_memory`): room taken
//! before it is read (or as it grows), a body past `max_body_bytes` drained and refused, and the
//! proxy's answers when there is no room.

use crate::budget::{parse_cost, Hold, NoRoom};
use crate::config::{mib, Api};
use crate::forward::Proxy;
use crate::shape;
use crate::steer::header;
use crate::upstream::Body;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::time::{Duration, Instant};

/// The most of an oversized request body read (and dropped) before its 413.
const MAX_DRAINED: usize = 256 << 20;

impl Proxy {
    /// Reads a limited request's body whole (it is estimated, and sent again on a retry), with
    /// room for it and its parse taken from the body budget first. A body of known length takes
    /// room for itself and a parse (three times its length: the tree, and the parser's copy of
    /// a string with escapes) before a byte is read, waiting for it until `deadline` with its
    /// upload held back meanwhile; one of unknown length takes room as it grows, without
    /// waiting (503 when there is none). Once read, its hold becomes what its parse really
    /// needs ([`parse_cost`]). One past `max_body_bytes` is read to its end and dropped (up to
    /// [`MAX_DRAINED`] within the read timeout), so the caller, still sending, gets the 413 and
    /// not a broken connection. Returns the time spent waiting for room too.
    pub(crate) async fn read_body(
        &self,
        api: Api,
        req: Request<Incoming>,
        deadline: Instant,
    ) -> Result<(http::request::Parts, Bytes, Hold, Duration), Response<Body>> {
        let max = self.config.max_body_bytes;
        let too_large = || {
            self.count_refusal("body_size");
            shape::error(
                api,
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "llmctl proxy: the request body is larger than {} (max_body_bytes in [proxy]); nothing was forwarded",
                    mib(max)
                ),
            )
        };
        // A client waiting for "100 Continue" sends nothing unless asked: a refused body is
        // then not asked for (and not drained).
        let continues =
            header(req.headers(), "expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
        let (parts, mut body) = req.into_parts();
        let length = http_body::Body::size_hint(&body)
            .exact()
            .and_then(|n| usize::try_from(n).ok());
        // A body of known length past the bound is not kept at all.
        let keep = length.is_none_or(|n| n <= max);
        let asked = Instant::now();
        let taken = match length {
            Some(n) if keep => self.take_room(3 * n, deadline).await,
            _ => self.bodies.take(0, deadline).await,
        };
        let waited = asked.elapsed();
        let mut hold = match taken {
            Ok(h) => h,
            Err(no) => {
                if !continues {
                    drain(&mut body, self.config.read_timeout).await;
                }
                return Err(self.no_room(api, no, 3 * length.unwrap_or(0)));
            }
        };
        let read = async {
            let mut kept: Vec<u8> = Vec::with_capacity(length.filter(|_| keep).unwrap_or(0));
            let mut seen: usize = 0;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| Unread::Broken(e.to_string()))?;
                let Some(data) = frame.data_ref() else {
                    continue;
                };
                seen += data.len();
                if seen > max || !keep {
                    if kept.capacity() > 0 {
                        // Past the bound: nothing more is kept, and its room goes back.
                        kept = Vec::new();
                        hold.shrink_to(0);
                    }
                    if seen > MAX_DRAINED {
                        break;
                    }
                    continue;
                }
                if kept.len() + data.len() > kept.capacity() {
                    // Of unknown length: room for what it grows to, now or never.
                    let cap = (kept.len() + data.len()).max(2 * kept.capacity()).min(max);
                    if hold.bytes() < cap {
                        hold.try_grow(cap - hold.bytes()).map_err(Unread::NoRoom)?;
                    }
                    kept.reserve_exact(cap - kept.len());
                }
                kept.extend_from_slice(data);
            }
            Ok::<_, Unread>((kept, seen))
        };
        let (kept, seen) = match tokio::time::timeout(self.config.read_timeout, read).await {
            Ok(Ok(x)) => x,
            Ok(Err(Unread::NoRoom(no))) => {
                let wanted = hold.bytes();
                drop(hold);
                drain(&mut body, self.config.read_timeout).await;
                return Err(self.no_room(api, no, wanted));
            }
            Ok(Err(Unread::Broken(e))) => {
                return Err(shape::error(
                    api,
                    StatusCode::BAD_REQUEST,
                    &format!("llmctl proxy: the request body could not be read ({e}); nothing was forwarded"),
                ))
            }
            Err(_) => {
                return Err(shape::error(
                    api,
                    StatusCode::REQUEST_TIMEOUT,
                    &format!(
                        "llmctl proxy: the request body did not arrive within {:?} (read_timeout in [proxy]); nothing was forwarded",
                        self.config.read_timeout
                    ),
                ))
            }
        };
        if seen > max {
            return Err(too_large());
        }
        // The body and what its parse will hold (a body of many tiny objects costs more).
        let need = kept.capacity() + parse_cost(&kept);
        if need > hold.bytes() {
            hold.try_grow(need - hold.bytes())
                .map_err(|no| self.no_room(api, no, need))?;
        }
        hold.shrink_to(need);
        Ok((parts, Bytes::from(kept), hold, waited))
    }

    /// Room from the body budget, counted while waited for.
    async fn take_room(&self, n: usize, deadline: Instant) -> Result<Hold, NoRoom> {
        match self.bodies.take(n, Instant::now()).await {
            Err(NoRoom::Full) => {}
            done => return done,
        }
        self.stats
            .body_waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.bodies.take(n, deadline).await
    }

    /// The answer when the body budget had no room for a request: 503 with a `Retry-After`
    /// while it is full, 413 when one request could never have that much.
    pub(crate) fn no_room(&self, api: Api, no: NoRoom, wanted: usize) -> Response<Body> {
        match no {
            NoRoom::TooLarge => {
                self.count_refusal("body_size");
                shape::error(
                    api,
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "llmctl proxy: reading this request body would hold {} in memory, more than one request may ({} of max_body_memory in [proxy]); nothing was forwarded",
                        mib(wanted),
                        mib(self.bodies.most_for_one())
                    ),
                )
            }
            NoRoom::Full => {
                self.count_refusal("body_memory");
                let mut r = shape::error(
                    api,
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "llmctl proxy: request bodies already hold {} of the {} they may (max_body_memory in [proxy]) and no room came free within the request's wait; nothing was forwarded, try again shortly",
                        mib(self.bodies.held()),
                        mib(self.bodies.max())
                    ),
                );
                r.headers_mut()
                    .insert("retry-after", HeaderValue::from_static("1"));
                r
            }
        }
    }
}

/// Reads the rest of a body refused for want of room and drops it (up to [`MAX_DRAINED`] within
/// a bound of `limit`, at most 30 s), so the caller, still sending, reads the refusal and not a
/// broken connection.
async fn drain(body: &mut Incoming, limit: Duration) {
    let mut seen = 0usize;
    let drained = async {
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, Bytes::len);
            if seen > MAX_DRAINED {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(limit.min(Duration::from_secs(30)), drained).await;
}

/// Why a limited request's body was not read.
enum Unread {
    Broken(String),
    NoRoom(NoRoom),
}
