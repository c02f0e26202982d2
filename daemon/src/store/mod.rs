//! Durable engine state in sled: bucket levels and runtime limits per key, cooldowns. The store
//! holds no policy; it saves and loads what the engine hands it.

use crate::engine::claims::ClaimRecord;
use crate::engine::{
    BucketSnapshot, CooldownSnapshot, Dimension, KeySnapshot, LimitSource, Period,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot open the state store at {path}: {source}")]
    Open { path: PathBuf, source: sled::Error },
    #[error("cannot write the state store: {0}")]
    Write(#[from] sled::Error),
    #[error("cannot encode state: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("cannot encode a key's levels: {0}")]
    EncodeLevels(#[from] postcard::Error),
}

/// What was found on disk, and what could not be read.
#[derive(Debug, Default)]
pub struct Loaded {
    pub keys: Vec<KeySnapshot>,
    pub cooldowns: Vec<CooldownSnapshot>,
    /// Entries that could not be read (their keys start empty).
    pub unreadable: Vec<String>,
}

/// Key records as written before limits had learned values of their own (tree `keys`):
/// postcard is positional, so they are read with their own layout and converted.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct KeySnapshotV1 {
    key: String,
    saved_unix_ms: i64,
    buckets: Vec<BucketSnapshotV1>,
    last_headers: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct BucketSnapshotV1 {
    dimension: Dimension,
    period: Period,
    limit: f64,
    capacity: f64,
    level: f64,
    source: LimitSource,
}

impl From<KeySnapshotV1> for KeySnapshot {
    fn from(v: KeySnapshotV1) -> KeySnapshot {
        KeySnapshot {
            key: v.key,
            saved_unix_ms: v.saved_unix_ms,
            buckets: v
                .buckets
                .into_iter()
                .map(|b| BucketSnapshot {
                    dimension: b.dimension,
                    period: b.period,
                    limit: b.limit,
                    capacity: b.capacity,
                    level: b.level,
                    source: b.source,
                    // A learned limit then was the headers' (restore reads `source`).
                    headers_limit: None,
                    headers_capacity: None,
                    aimd_rate: None,
                    aimd_refused_rate: 0.0,
                })
                .collect(),
            last_headers: v.last_headers,
            family: None,
            contacted: false,
            usage_counting: None,
        }
    }
}

pub struct Store {
    db: sled::Db,
    /// Key records, current layout.
    keys: sled::Tree,
    /// Key records in the first layout, read until a key is written anew.
    keys_v1: sled::Tree,
    cooldowns: sled::Tree,
    claims: sled::Tree,
    path: PathBuf,
}

impl Store {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let open_err = |source| StoreError::Open {
            path: dir.to_path_buf(),
            source,
        };
        let db = sled::Config::new()
            .path(dir)
            .flush_every_ms(Some(500))
            // The state is small (a record per key); sled's default 1 GiB cache is not needed.
            .cache_capacity(1024 * 1024)
            .segment_size(128 * 1024)
            .open()
            .map_err(open_err)?;
        let keys = db.open_tree("keys_v2").map_err(open_err)?;
        let keys_v1 = db.open_tree("keys").map_err(open_err)?;
        let cooldowns = db.open_tree("cooldowns").map_err(open_err)?;
        let claims = db.open_tree("claims").map_err(open_err)?;
        Ok(Store {
            db,
            keys,
            keys_v1,
            cooldowns,
            claims,
            path: dir.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store had never been written before (a fresh data dir).
    pub fn was_empty(&self) -> bool {
        self.keys.is_empty() && self.keys_v1.is_empty() && self.cooldowns.is_empty()
    }

    pub fn load(&self) -> Loaded {
        let mut loaded = Loaded::default();
        for item in self.keys.iter() {
            match item {
                Ok((k, v)) => match postcard::from_bytes::<KeySnapshot>(&v) {
                    Ok(s) => loaded.keys.push(s),
                    Err(e) => loaded
                        .unreadable
                        .push(format!("key {:?}: {e}", String::from_utf8_lossy(&k))),
                },
                Err(e) => loaded.unreadable.push(format!("keys tree: {e}")),
            }
        }
        for item in self.keys_v1.iter() {
            match item {
                Ok((k, _)) if self.keys.contains_key(&k).unwrap_or(false) => {}
                Ok((k, v)) => match postcard::from_bytes::<KeySnapshotV1>(&v) {
                    Ok(s) => loaded.keys.push(s.into()),
                    Err(e) => loaded
                        .unreadable
                        .push(format!("key {:?}: {e}", String::from_utf8_lossy(&k))),
                },
                Err(e) => loaded.unreadable.push(format!("keys tree: {e}")),
            }
        }
        for item in self.cooldowns.iter() {
            match item {
                Ok((k, v)) => match serde_json::from_slice::<CooldownSnapshot>(&v) {
                    Ok(s) => loaded.cooldowns.push(s),
                    Err(e) => loaded
                        .unreadable
                        .push(format!("cooldown {:?}: {e}", String::from_utf8_lossy(&k))),
                },
                Err(e) => loaded.unreadable.push(format!("cooldowns tree: {e}")),
            }
        }
        loaded
    }

    pub fn save_keys(&self, snaps: &[KeySnapshot]) -> Result<(), StoreError> {
        if snaps.is_empty() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        let mut old = sled::Batch::default();
        let mut any_old = false;
        for s in snaps {
            // Compact: these are written four times a second for every key that changes.
            batch.insert(s.key.as_bytes(), postcard::to_stdvec(s)?);
            if !self.keys_v1.is_empty() {
                old.remove(s.key.as_bytes());
                any_old = true;
            }
        }
        self.keys.apply_batch(batch)?;
        if any_old {
            self.keys_v1.apply_batch(old)?;
        }
        Ok(())
    }

    /// Replaces the saved cooldowns with `all`.
    pub fn save_cooldowns(&self, all: &[CooldownSnapshot]) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for item in self.cooldowns.iter().keys() {
            let k = item?;
            if !all.iter().any(|c| c.key.as_bytes() == k.as_ref()) {
                batch.remove(k);
            }
        }
        for c in all {
            batch.insert(c.key.as_bytes(), serde_json::to_vec(c)?);
        }
        self.cooldowns.apply_batch(batch)?;
        Ok(())
    }

    /// An idempotency record; an unreadable one reads as absent (and is logged by the caller).
    pub fn claim(&self, key: &str) -> Result<Option<ClaimRecord>, StoreError> {
        Ok(self
            .claims
            .get(key.as_bytes())?
            .and_then(|v| serde_json::from_slice(&v).ok()))
    }

    /// Stores an idempotency record and flushes it to disk before returning.
    pub fn put_claim(&self, key: &str, record: &ClaimRecord) -> Result<(), StoreError> {
        self.claims
            .insert(key.as_bytes(), serde_json::to_vec(record)?)?;
        self.db.flush()?;
        Ok(())
    }

    /// Makes everything written so far durable.
    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(key: &str, level: f64) -> KeySnapshot {
        KeySnapshot {
            key: key.into(),
            saved_unix_ms: 5,
            buckets: vec![BucketSnapshot {
                dimension: Dimension::Tokens,
                period: Period::Minute,
                limit: 100.0,
                capacity: 100.0,
                level,
                source: LimitSource::Config,
                headers_limit: Some(80.0),
                headers_capacity: Some(20.0),
                aimd_rate: Some(60.0),
                aimd_refused_rate: 70.0,
            }],
            last_headers: BTreeMap::new(),
            family: Some(crate::engine::Provider::Anthropic),
            contacted: true,
            usage_counting: Some(crate::engine::OutputCounting::Reserved),
        }
    }

    /// Opens the store again in this process: sled's flusher thread may hold the lock of the
    /// handle just dropped for a moment after it is gone.
    fn reopen(dir: &Path) -> Store {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match Store::open(dir) {
                Ok(s) => return s,
                Err(e)
                    if std::time::Instant::now() < deadline && e.to_string().contains("lock") =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("reopen: {e}"),
            }
        }
    }

    #[test]
    fn records_of_the_first_layout_are_read_and_replaced() {
        let dir = std::env::temp_dir().join(format!("llmctl-store-v1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let bucket = |dimension, level| BucketSnapshotV1 {
            dimension,
            period: Period::Minute,
            limit: 600.0,
            capacity: 10.0,
            level,
            source: LimitSource::Headers,
        };
        let old = KeySnapshotV1 {
            key: "old".into(),
            saved_unix_ms: 5,
            buckets: vec![
                bucket(Dimension::Requests, 3.0),
                bucket(Dimension::Tokens, 7.0),
            ],
            last_headers: BTreeMap::from([("x".to_string(), "y".to_string())]),
        };
        {
            let s = Store::open(&dir).expect("open");
            s.keys_v1
                .insert("old", postcard::to_stdvec(&old).expect("encode"))
                .expect("insert");
            assert!(!s.was_empty());
            let loaded = s.load();
            assert!(loaded.unreadable.is_empty(), "{:?}", loaded.unreadable);
            let k = &loaded.keys[0];
            assert_eq!(
                (k.key.as_str(), k.buckets.len(), k.buckets[1].level),
                ("old", 2, 7.0)
            );
            assert_eq!(k.buckets[0].source, LimitSource::Headers);
            // Written anew: the new layout replaces it.
            s.save_keys(&[snap("old", 4.0)]).expect("save");
            let loaded = s.load();
            assert_eq!(loaded.keys.len(), 1);
            assert_eq!(loaded.keys[0].buckets[0].level, 4.0);
            assert_eq!(loaded.keys[0].buckets[0].aimd_rate, Some(60.0));
            assert!(s.keys_v1.is_empty());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn saves_and_loads_across_reopen() {
        let dir = std::env::temp_dir().join(format!("llmctl-store-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let s = Store::open(&dir).expect("open");
            assert!(s.was_empty());
            s.save_keys(&[snap("a", 10.0), snap("b", -3.0)])
                .expect("save");
            s.save_keys(&[snap("a", 20.0)]).expect("save");
            let c = |k: &str| CooldownSnapshot {
                key: k.into(),
                until_unix_ms: 9,
                reason: "r".into(),
                strikes: 1,
            };
            s.save_cooldowns(&[c("x"), c("y")]).expect("save");
            s.save_cooldowns(&[c("y")]).expect("save");
            s.keys.insert("broken", &b"{not json"[..]).expect("insert");
            s.flush().expect("flush");
        }
        let s = reopen(&dir);
        let loaded = s.load();
        let mut levels: Vec<(String, f64)> = loaded
            .keys
            .iter()
            .map(|k| (k.key.clone(), k.buckets[0].level))
            .collect();
        levels.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(levels, vec![("a".into(), 20.0), ("b".into(), -3.0)]);
        assert_eq!(
            loaded
                .cooldowns
                .iter()
                .map(|c| c.key.as_str())
                .collect::<Vec<_>>(),
            vec!["y"]
        );
        assert_eq!(loaded.unreadable.len(), 1);
        assert!(loaded.unreadable[0].contains("broken"));
        let rec = ClaimRecord::Done {
            result: vec![1, 2],
            done_unix_ms: 3,
        };
        s.put_claim("job", &rec).expect("put");
        drop(s);
        let s = reopen(&dir);
        assert_eq!(s.claim("job").expect("get"), Some(rec));
        assert_eq!(s.claim("other").expect("get"), None);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
