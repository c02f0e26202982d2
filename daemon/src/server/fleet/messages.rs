//! What the hosts of a fleet tell each other on the channel: a cooldown to apply, a key to
//! renew. Written here, read here, and listened for here.

use super::redis::{self, CHANNEL};
use super::{now, Fleet, Shared, BACKOFF_MAX, BACKOFF_MIN};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A message from another host.
#[derive(Debug, PartialEq)]
pub enum Message {
    Cooldown {
        key: String,
        left: Duration,
        reason: String,
    },
    Renew {
        key: String,
    },
}

pub fn parse_message(text: &str, me: &str) -> Option<Message> {
    let mut f = text.splitn(5, '\t');
    let kind = f.next()?;
    let key = f.next()?.to_string();
    match kind {
        "r" => (f.next()? != me).then_some(Message::Renew { key }),
        "c" => {
            let ms: u64 = f.next()?.parse().ok()?;
            let from = f.next()?;
            let reason = f.next().unwrap_or_default();
            (from != me).then(|| Message::Cooldown {
                key,
                left: Duration::from_millis(ms),
                reason: format!("{reason} (from host {from})"),
            })
        }
        _ => None,
    }
}

/// A cooldown set on this host, for the others: `left_ms` from now.
pub fn cooldown_text(key: &str, left_ms: i64, host: &str, reason: &str) -> String {
    format!("c\t{key}\t{left_ms}\t{host}\t{reason}")
}

/// Asks the other hosts to renew their part of `key`.
pub fn renew_text(key: &str, host: &str) -> String {
    format!("r\t{key}\t{host}")
}

impl Fleet {
    pub(super) fn on_message(&mut self, shared: &Shared, m: Message) {
        match m {
            Message::Renew { key } => {
                if !self.asked.contains(&key) {
                    self.asked.push(key);
                }
            }
            Message::Cooldown { key, left, reason } => {
                let t = now();
                let until = t.unix_ms.saturating_add(left.as_millis() as i64);
                let mut core = shared.core();
                if let Err(e) = core.engine.apply_shared_cooldown(&key, until, &reason, t) {
                    tracing::debug!("fleet: cooldown on {key:?} not applied: {e}");
                }
                core.deliver(t);
            }
        }
    }

    pub(super) async fn publish_cooldowns(&mut self) {
        let Some(r) = self.redis.clone() else { return };
        let t = now();
        while let Some(c) = self.outbox.first().cloned() {
            let left = c.until_unix_ms.saturating_sub(t.unix_ms);
            if left > 0 {
                let message = cooldown_text(&c.key, left, &self.view.host, &c.reason);
                let left = Duration::from_millis(left as u64);
                if let Err(e) = r.cooldown(&c.key, left, &c.reason, &message).await {
                    self.failed(&e);
                    return;
                }
            }
            self.outbox.remove(0);
        }
    }
}

/// Listens to the fleet's channel, reconnecting with backoff, until the daemon stops.
pub(super) async fn listen(
    client: ::redis::Client,
    me: String,
    tx: mpsc::Sender<Message>,
    mut stop: watch::Receiver<bool>,
) {
    use tokio_stream::StreamExt;
    let mut backoff = BACKOFF_MIN;
    loop {
        let connected =
            tokio::time::timeout(redis::CALL_TIMEOUT * 2, client.get_async_pubsub()).await;
        if let Ok(Ok(mut pubsub)) = connected {
            let subscribed =
                tokio::time::timeout(redis::CALL_TIMEOUT * 2, pubsub.subscribe(CHANNEL)).await;
            if matches!(subscribed, Ok(Ok(()))) {
                backoff = BACKOFF_MIN;
                let mut messages = pubsub.on_message();
                loop {
                    tokio::select! {
                        m = messages.next() => match m {
                            Some(m) => {
                                let Ok(text) = m.get_payload::<String>() else { continue };
                                if let Some(parsed) = parse_message(&text, &me) {
                                    // A full queue drops the message: renewals read cooldowns
                                    // again, and asks repeat.
                                    if let Err(mpsc::error::TrySendError::Closed(_)) =
                                        tx.try_send(parsed)
                                    {
                                        return;
                                    }
                                }
                            }
                            None => break,
                        },
                        _ = stop.changed() => return,
                    }
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_from_other_hosts_are_read_and_ones_own_ignored() {
        assert_eq!(
            parse_message("c\topenai/gpt\t1500\tb\t429 from the provider", "a"),
            Some(Message::Cooldown {
                key: "openai/gpt".into(),
                left: Duration::from_millis(1500),
                reason: "429 from the provider (from host b)".into(),
            })
        );
        assert_eq!(parse_message("c\tk\t1500\ta\twhy", "a"), None);
        assert_eq!(
            parse_message("r\tk\tb", "a"),
            Some(Message::Renew { key: "k".into() })
        );
        assert_eq!(parse_message("r\tk\ta", "a"), None);
        assert_eq!(parse_message("x\tk", "a"), None);
        assert_eq!(parse_message("c\tk\tsoon\tb\twhy", "a"), None);
    }

    #[test]
    fn what_one_host_writes_the_others_read() {
        assert_eq!(
            parse_message(&cooldown_text("k/m", 250, "b", "429\tbusy"), "a"),
            Some(Message::Cooldown {
                key: "k/m".into(),
                left: Duration::from_millis(250),
                reason: "429\tbusy (from host b)".into(),
            })
        );
        assert_eq!(
            parse_message(&renew_text("k/m", "b"), "a"),
            Some(Message::Renew { key: "k/m".into() })
        );
    }
}
