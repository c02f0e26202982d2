//! What each virtual host hears on its own subscription to the fleet's channel.

use super::*;

/// What the hosts' subscriptions heard: keys each was asked to renew, and cooldowns.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) asked: HashSet<(usize, usize)>,
    pub(super) cooldowns: Vec<(usize, String, Duration, String)>,
}

/// Host `i`'s subscription to the fleet's channel.
pub(super) async fn subscribe(
    client: &redis::Client,
    i: usize,
) -> Result<redis::aio::PubSub, String> {
    let mut pubsub = client
        .get_async_pubsub()
        .await
        .map_err(|e| format!("host {i} cannot subscribe: {e}"))?;
    pubsub
        .subscribe(CHANNEL)
        .await
        .map_err(|e| format!("host {i} cannot subscribe: {e}"))?;
    Ok(pubsub)
}

/// A host's subscription: asks to renew a key, from another host.
pub(super) async fn listen(
    mut pubsub: redis::aio::PubSub,
    host: usize,
    inbox: Arc<Mutex<Inbox>>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    use tokio_stream::StreamExt;
    let me = format!("h{host}");
    let mut messages = pubsub.on_message();
    loop {
        tokio::select! {
            m = messages.next() => {
                let Some(m) = m else { return };
                let Ok(text) = m.get_payload::<String>() else { continue };
                let Ok(mut inbox) = inbox.lock() else { return };
                match parse_message(&text, &me) {
                    Some(Message::Renew { key }) => {
                        if let Some(k) = key_index(&key) {
                            inbox.asked.insert((host, k));
                        }
                    }
                    Some(Message::Cooldown { key, left, reason }) => {
                        inbox.cooldowns.push((host, key, left, reason));
                    }
                    None => {}
                }
            }
            _ = stop.changed() => return,
        }
    }
}
