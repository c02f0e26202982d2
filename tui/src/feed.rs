//! The Watch feed: connects to the daemon, forwards every status message, and when the daemon
//! goes away says so and tries again with a growing delay. It runs as its own task so that a
//! slow or absent daemon never holds up the keyboard.

use llmctl_proto::v1 as pb;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

const FIRST_RETRY: Duration = Duration::from_millis(250);
const LONGEST_RETRY: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub enum FeedEvent {
    Status(Box<pb::StatusResponse>),
    Disconnected { reason: String, retry_in: Duration },
}

/// Starts the feed; it stops when the receiver is dropped (or the task is aborted).
pub fn spawn(
    socket: PathBuf,
    interval: Duration,
    key_prefix: String,
) -> (mpsc::Receiver<FeedEvent>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(4);
    let task = tokio::spawn(run(socket, interval, key_prefix, tx));
    (rx, task)
}

async fn run(socket: PathBuf, interval: Duration, key_prefix: String, tx: mpsc::Sender<FeedEvent>) {
    let mut retry_in = FIRST_RETRY;
    loop {
        let reason = match watch(&socket, interval, &key_prefix, &tx, &mut retry_in).await {
            Ok(()) => return,
            Err(reason) => reason,
        };
        let event = FeedEvent::Disconnected { reason, retry_in };
        if tx.send(event).await.is_err() {
            return;
        }
        tokio::time::sleep(retry_in).await;
        retry_in = (retry_in * 2).min(LONGEST_RETRY);
    }
}

/// Streams until the daemon goes away (Err with why) or nobody listens any more (Ok).
async fn watch(
    socket: &std::path::Path,
    interval: Duration,
    key_prefix: &str,
    tx: &mpsc::Sender<FeedEvent>,
    retry_in: &mut Duration,
) -> Result<(), String> {
    let mut client = llmctl_client::connect(socket)
        .await
        .map_err(|e| e.to_string())?;
    let request = pb::WatchRequest {
        interval_ms: interval.as_millis().min(i64::MAX as u128) as i64,
        key_prefix: key_prefix.to_string(),
    };
    let mut stream = client
        .watch(request)
        .await
        .map_err(|s| format!("the daemon refused to stream its status: {}", s.message()))?
        .into_inner();
    // A daemon that stops talking without closing the socket counts as gone.
    let silence = (interval * 3).max(Duration::from_secs(5));
    loop {
        match tokio::time::timeout(silence, stream.message()).await {
            Ok(Ok(Some(mut status))) => {
                *retry_in = FIRST_RETRY;
                // Nothing a client wrote reaches the terminal as an escape sequence.
                llmctl_proto::text::clean_status(&mut status);
                if tx.send(FeedEvent::Status(Box::new(status))).await.is_err() {
                    return Ok(());
                }
            }
            Ok(Ok(None)) => return Err("the daemon closed the stream".into()),
            Ok(Err(s)) => return Err(format!("the stream broke: {}", s.message())),
            Err(_) => {
                return Err(format!(
                    "no status from the daemon for {} s",
                    silence.as_secs()
                ))
            }
        }
    }
}
