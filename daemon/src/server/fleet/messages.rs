//! What the hosts of a fleet tell each other on the channel: a cooldown to apply, a key to
//! renew. Written here, read here, and listened for here.

use super::redis::{self, CHANNEL};
use super::{now, Fleet, Shared, BACKOFF_MAX, BACKOFF_MIN};
use std::collections::BTreeSet;
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

/// How a listen ended.
enum Heard {
    /// It listened, then the connection went: listen again soon.
    Listened,
    /// It could not connect or subscribe: listen again after a backoff.
    Nothing,
    /// The daemon stops.
    Stop,
}

/// Listens to the fleet's messages, reconnecting with backoff, until the daemon stops: on the
/// one channel of a single Redis, or, in a Redis Cluster, on the sharded channel of every key
/// in `keys` (the keys this host knows).
pub(super) async fn listen(
    target: redis::Target,
    me: String,
    tx: mpsc::Sender<Message>,
    mut keys: watch::Receiver<BTreeSet<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut backoff = BACKOFF_MIN;
    loop {
        let heard = match redis::is_cluster(&target.client).await {
            Ok(false) => listen_one(&target.client, &me, &tx, &mut stop).await,
            Ok(true) => listen_sharded(&target, &me, &tx, &mut keys, &mut stop).await,
            Err(_) => Heard::Nothing,
        };
        match heard {
            Heard::Stop => return,
            Heard::Listened => backoff = BACKOFF_MIN,
            Heard::Nothing => {}
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Passes a message on; false when the fleet is gone. A full queue drops it: renewals read
/// cooldowns again, and asks repeat.
fn pass_on(text: &str, me: &str, tx: &mpsc::Sender<Message>) -> bool {
    match parse_message(text, me) {
        Some(parsed) => !matches!(
            tx.try_send(parsed),
            Err(mpsc::error::TrySendError::Closed(_))
        ),
        None => true,
    }
}

/// One Redis: its one channel.
async fn listen_one(
    client: &::redis::Client,
    me: &str,
    tx: &mpsc::Sender<Message>,
    stop: &mut watch::Receiver<bool>,
) -> Heard {
    use tokio_stream::StreamExt;
    let Ok(Ok(mut pubsub)) =
        tokio::time::timeout(redis::CALL_TIMEOUT * 2, client.get_async_pubsub()).await
    else {
        return Heard::Nothing;
    };
    let subscribed = tokio::time::timeout(redis::CALL_TIMEOUT * 2, pubsub.subscribe(CHANNEL)).await;
    if !matches!(subscribed, Ok(Ok(()))) {
        return Heard::Nothing;
    }
    let mut messages = pubsub.on_message();
    loop {
        tokio::select! {
            m = messages.next() => match m {
                Some(m) => {
                    let Ok(text) = m.get_payload::<String>() else { continue };
                    if !pass_on(&text, me, tx) {
                        return Heard::Stop;
                    }
                }
                None => return Heard::Listened,
            },
            _ = stop.changed() => return Heard::Stop,
        }
    }
}

/// A Redis Cluster: the sharded channel of each key known here, on the node holding the key.
/// The client follows a key whose slot moved (the node that gave it up unsubscribes this
/// host, which subscribes again where the slot went).
async fn listen_sharded(
    target: &redis::Target,
    me: &str,
    tx: &mpsc::Sender<Message>,
    keys: &mut watch::Receiver<BTreeSet<String>>,
    stop: &mut watch::Receiver<bool>,
) -> Heard {
    use ::redis::{PushKind, Value};
    let (push_tx, mut pushes) = mpsc::unbounded_channel();
    let Ok(cluster) = redis::cluster_client(target).and_then(|b| {
        b.use_protocol(::redis::ProtocolVersion::RESP3)
            .push_sender(push_tx)
            .build()
    }) else {
        return Heard::Nothing;
    };
    let Ok(Ok(mut conn)) =
        tokio::time::timeout(redis::CALL_TIMEOUT * 4, cluster.get_async_connection()).await
    else {
        return Heard::Nothing;
    };
    let mut subscribed = BTreeSet::new();
    let mut heard = Heard::Nothing;
    loop {
        let wanted: Vec<String> = keys
            .borrow_and_update()
            .iter()
            .filter(|k| !subscribed.contains(*k))
            .cloned()
            .collect();
        for key in wanted {
            let channel = redis::key_channel(&key);
            match tokio::time::timeout(redis::CALL_TIMEOUT * 2, conn.ssubscribe(&channel)).await {
                Ok(Ok(())) => {
                    subscribed.insert(key);
                    heard = Heard::Listened;
                }
                _ => return heard,
            }
        }
        tokio::select! {
            p = pushes.recv() => {
                let Some(p) = p else { return heard };
                let text = |v: Option<&Value>| match v {
                    Some(Value::BulkString(b)) => String::from_utf8(b.clone()).ok(),
                    Some(Value::SimpleString(s)) => Some(s.clone()),
                    _ => None,
                };
                match p.kind {
                    PushKind::SMessage => {
                        if let Some(m) = text(p.data.get(1)) {
                            if !pass_on(&m, me, tx) {
                                return Heard::Stop;
                            }
                        }
                    }
                    // The slot moved: subscribed again, where it is now.
                    PushKind::SUnsubscribe => {
                        if let Some(key) = text(p.data.first())
                            .as_deref()
                            .and_then(redis::channel_key)
                        {
                            subscribed.remove(key);
                        }
                    }
                    PushKind::Disconnection => return heard,
                    _ => {}
                }
            }
            changed = keys.changed() => if changed.is_err() {
                return Heard::Stop;
            },
            _ = stop.changed() => return Heard::Stop,
        }
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
