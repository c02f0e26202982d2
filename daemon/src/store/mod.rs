//! Durable engine state in sled: bucket levels and runtime limits per key, cooldowns, claims. The
//! store holds no policy; it saves and loads what the engine hands it. Each flush raises the
//! store's generation, kept inside sled and in a marker beside it (`datadir`), so a store that
//! lost records is told from one that did not.

pub mod datadir;

use crate::claims::ClaimRecord;
use crate::engine::{BucketLevel, BucketSnapshot, CooldownSnapshot, KeySnapshot};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use thiserror::Error;

pub use datadir::{DataDirError, DataDirLock, Marker, MarkerState};

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
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error("the state store in {path} is damaged: {what}")]
    Damaged { path: PathBuf, what: String },
    #[error("cannot move the unreadable store in {dir} aside: {source}")]
    MoveAside {
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl StoreError {
    /// The disk, not the store, is the trouble (full, read-only, not permitted): the store may be
    /// fine and must not be moved aside.
    pub fn is_environmental(&self) -> bool {
        use std::io::ErrorKind::*;
        let kind = match self {
            StoreError::Open {
                source: sled::Error::Io(e),
                ..
            }
            | StoreError::Write(sled::Error::Io(e)) => e.kind(),
            StoreError::DataDir(DataDirError::Io { source, .. }) => source.kind(),
            _ => return false,
        };
        matches!(
            kind,
            StorageFull | QuotaExceeded | ReadOnlyFilesystem | PermissionDenied | ResourceBusy
        )
    }

    /// Another process holds the store: it is in use, not unreadable, and must never be moved.
    pub fn is_locked(&self) -> bool {
        match self {
            StoreError::DataDir(DataDirError::Locked { .. }) => true,
            StoreError::Open {
                source: sled::Error::Io(e),
                ..
            } => e.kind() == std::io::ErrorKind::WouldBlock || e.to_string().contains("lock"),
            _ => false,
        }
    }
}

/// What opening the store found about the run before.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Opened {
    /// What the marker said (None: no marker, a data dir from before markers or a new one).
    pub marker: Option<MarkerState>,
    /// The store's own generation when opened.
    pub generation: u64,
    /// When the store was found to have lost records (now, or remembered from a start before):
    /// claims made before it are not all known.
    pub lost_at_unix_ms: Option<i64>,
}

impl Opened {
    /// The last run stopped without flushing everything (killed, crashed, or it lost records).
    pub fn unclean(&self, had_records: bool) -> bool {
        match self.marker {
            Some(m) => !m.clean || m.generation > self.generation,
            None => had_records,
        }
    }
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
    buckets: Vec<BucketLevel>,
    last_headers: BTreeMap<String, String>,
}

impl From<KeySnapshotV1> for KeySnapshot {
    fn from(v: KeySnapshotV1) -> KeySnapshot {
        KeySnapshot {
            key: v.key,
            saved_unix_ms: v.saved_unix_ms,
            buckets: v
                .buckets
                .into_iter()
                .map(|bucket| BucketSnapshot {
                    bucket,
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
    /// `generation` and `claims_lost_at_ms`.
    meta: sled::Tree,
    /// Orders generation numbers as they are written.
    generation: Mutex<u64>,
    marker: Marker,
    path: PathBuf,
}

/// Runs `f`, turning a panic inside sled (a damaged file) into an error.
fn guarded<T>(path: &Path, f: impl FnOnce() -> T) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("sled panicked")
            .to_string();
        StoreError::Damaged {
            path: path.to_path_buf(),
            what,
        }
    })
}

const GENERATION: &str = "generation";
const LOST_AT: &str = "claims_lost_at_ms";

fn read_i64(tree: &sled::Tree, name: &str) -> Result<Option<i64>, sled::Error> {
    Ok(tree.get(name)?.and_then(|v| {
        let bytes: [u8; 8] = v.as_ref().try_into().ok()?;
        Some(i64::from_be_bytes(bytes))
    }))
}

/// Key records (tree `keys`) are a zero byte, a version byte, then postcard. No record before
/// versions starts with a zero byte (postcard begins with the key's length, and no key is
/// empty), so those are still read, as layout 2; a version this build does not know is named
/// as unreadable, never read as something else.
const KEY_RECORD_TAG: u8 = 0;
const KEY_RECORD_V3: u8 = 3;

fn encode_key(snap: &KeySnapshot) -> Result<Vec<u8>, StoreError> {
    let mut out = vec![KEY_RECORD_TAG, KEY_RECORD_V3];
    out.extend(postcard::to_stdvec(snap)?);
    Ok(out)
}

fn decode_key(bytes: &[u8]) -> Result<KeySnapshot, String> {
    match bytes {
        [KEY_RECORD_TAG, KEY_RECORD_V3, rest @ ..] => {
            postcard::from_bytes(rest).map_err(|e| e.to_string())
        }
        [KEY_RECORD_TAG, v, ..] => Err(format!(
            "record layout {v} is newer than this llmctl knows (up to {KEY_RECORD_V3}); run the \
             llmctl that wrote it, or let the key start empty"
        )),
        // Layout 2: the same fields, before records carried a version.
        _ => postcard::from_bytes(bytes).map_err(|e| e.to_string()),
    }
}

/// Claim records are postcard after a version byte; the first ones were JSON objects.
const CLAIM_V2: u8 = 2;

pub(crate) fn encode_claim(record: &ClaimRecord) -> Result<Vec<u8>, StoreError> {
    let mut out = vec![CLAIM_V2];
    out.extend(postcard::to_stdvec(record)?);
    Ok(out)
}

pub(crate) fn decode_claim(bytes: &[u8]) -> Option<ClaimRecord> {
    /// The JSON layout of the first records.
    #[derive(Deserialize)]
    #[serde(tag = "state", rename_all = "snake_case")]
    enum ClaimV1 {
        Pending { since_unix_ms: i64, ttl_ms: i64 },
        Done { result: Vec<u8>, done_unix_ms: i64 },
    }
    match bytes.split_first()? {
        (&CLAIM_V2, rest) => postcard::from_bytes(rest).ok(),
        (b'{', _) => Some(match serde_json::from_slice::<ClaimV1>(bytes).ok()? {
            ClaimV1::Pending {
                since_unix_ms,
                ttl_ms,
            } => ClaimRecord::Pending {
                since_unix_ms,
                ttl_ms,
                holder_uid: None,
            },
            ClaimV1::Done {
                result,
                done_unix_ms,
            } => ClaimRecord::Done {
                result,
                done_unix_ms,
            },
        }),
        _ => None,
    }
}

/// Moves what sled keeps in `dir` into `dir/unreadable-<ms>/`, leaving the lock and the marker
/// (whose generation then tells the fresh store that records were lost).
pub fn move_aside(dir: &Path, now_unix_ms: i64) -> Result<PathBuf, StoreError> {
    let aside = dir.join(format!("{}{now_unix_ms}", datadir::ASIDE_PREFIX));
    let err = |source| StoreError::MoveAside {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir(&aside).map_err(err)?;
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == datadir::LOCK_FILE
            || name == datadir::MARKER_FILE
            || name.starts_with(datadir::ASIDE_PREFIX)
        {
            continue;
        }
        std::fs::rename(entry.path(), aside.join(&*name)).map_err(err)?;
    }
    Ok(aside)
}

impl Store {
    /// Opens (or creates) the store in `dir` (which the caller has locked), compares its
    /// generation with the marker's, and marks the daemon alive and not yet stopped.
    pub fn open(dir: &Path, now_unix_ms: i64) -> Result<(Store, Opened), StoreError> {
        let open_err = |source| StoreError::Open {
            path: dir.to_path_buf(),
            source,
        };
        let (db, keys, keys_v1, cooldowns, claims, meta, generation, lost) = guarded(dir, || {
            let db = sled::Config::new()
                .path(dir)
                .flush_every_ms(Some(500))
                // The state is small (a record per key); sled's default 1 GiB cache is not needed.
                .cache_capacity(1024 * 1024)
                .segment_size(128 * 1024)
                .open()?;
            let keys = db.open_tree("keys_v2")?;
            let keys_v1 = db.open_tree("keys")?;
            let cooldowns = db.open_tree("cooldowns")?;
            let claims = db.open_tree("claims")?;
            let meta = db.open_tree("meta")?;
            let generation = read_i64(&meta, GENERATION)?.unwrap_or(0) as u64;
            let lost = read_i64(&meta, LOST_AT)?;
            Ok::<_, sled::Error>((db, keys, keys_v1, cooldowns, claims, meta, generation, lost))
        })?
        .map_err(open_err)?;
        let mut lost_at_unix_ms = lost;
        let (marker, before) = Marker::open(dir)?;
        if before.is_some_and(|m| m.generation > generation) {
            // Records the marker saw flushed are gone: remember when that was found, so a
            // restart does not forget it once the generations agree again.
            meta.insert(LOST_AT, &now_unix_ms.to_be_bytes())
                .map_err(open_err)?;
            lost_at_unix_ms = Some(now_unix_ms);
        }
        let store = Store {
            db,
            keys,
            keys_v1,
            cooldowns,
            claims,
            meta,
            generation: Mutex::new(generation.max(marker.generation())),
            marker,
            path: dir.to_path_buf(),
        };
        store.flush()?;
        store.mark_alive(now_unix_ms);
        let opened = Opened {
            marker: before,
            generation,
            lost_at_unix_ms,
        };
        Ok((store, opened))
    }

    /// Notes that the daemon is alive now (read back after a crash to date it).
    pub fn mark_alive(&self, now_unix_ms: i64) {
        if let Err(e) = self.marker.write(now_unix_ms, false) {
            tracing::warn!("cannot write the marker in {}: {e}", self.path.display());
        }
    }

    /// Notes that everything is flushed and the daemon stops.
    pub fn mark_clean(&self, now_unix_ms: i64) -> std::io::Result<()> {
        self.marker.write(now_unix_ms, true)
    }

    /// Forgets that claims were lost (an operator accepted it, or every claim from before has
    /// expired).
    pub fn forget_loss(&self) -> Result<(), StoreError> {
        self.meta.remove(LOST_AT)?;
        self.flush()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store had never been written before (a fresh data dir).
    pub fn was_empty(&self) -> bool {
        self.keys.is_empty() && self.keys_v1.is_empty() && self.cooldowns.is_empty()
    }

    /// Everything saved; entries that cannot be decoded are listed, a damaged file is an error.
    pub fn load(&self) -> Result<Loaded, StoreError> {
        guarded(&self.path, || self.load_unguarded())
    }

    fn load_unguarded(&self) -> Loaded {
        let mut loaded = Loaded::default();
        for item in self.keys.iter() {
            match item {
                Ok((k, v)) => match decode_key(&v) {
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
            batch.insert(s.key.as_bytes(), encode_key(s)?);
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

    /// Forgets the saved state of keys the engine evicted.
    pub fn remove_keys(&self, names: &[String]) -> Result<(), StoreError> {
        if names.is_empty() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        for n in names {
            batch.remove(n.as_bytes());
        }
        self.keys.apply_batch(batch.clone())?;
        self.keys_v1.apply_batch(batch)?;
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
            .and_then(|v| decode_claim(&v)))
    }

    /// Stores an idempotency record and flushes it to disk before returning.
    pub fn put_claim(&self, key: &str, record: &ClaimRecord) -> Result<(), StoreError> {
        self.claims.insert(key.as_bytes(), encode_claim(record)?)?;
        self.flush()
    }

    /// Whether any idempotency record is kept.
    pub fn has_claims(&self) -> bool {
        !self.claims.is_empty()
    }

    /// Every readable idempotency record, with its key.
    pub fn all_claims(&self) -> Result<Vec<(String, ClaimRecord)>, StoreError> {
        let mut out = Vec::new();
        for item in self.claims.iter() {
            let (k, v) = item?;
            if let (Ok(key), Some(record)) = (std::str::from_utf8(&k), decode_claim(&v)) {
                out.push((key.to_string(), record));
            }
        }
        Ok(out)
    }

    /// Removes the records `expired` says are past keeping, and unreadable ones; returns how
    /// many went.
    pub fn expire_claims(
        &self,
        expired: impl Fn(&ClaimRecord) -> bool,
    ) -> Result<usize, StoreError> {
        let mut batch = sled::Batch::default();
        let mut n = 0;
        for item in self.claims.iter() {
            let (k, v) = item?;
            if decode_claim(&v).is_none_or(|r| expired(&r)) {
                batch.remove(k);
                n += 1;
            }
        }
        if n > 0 {
            self.claims.apply_batch(batch)?;
            self.flush()?;
        }
        Ok(n)
    }

    /// When the store was found to have lost records, if it was.
    pub fn claims_lost_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(read_i64(&self.meta, LOST_AT)?)
    }

    /// Makes everything written so far durable, under a new generation that the marker learns
    /// once it is on disk.
    pub fn flush(&self) -> Result<(), StoreError> {
        let generation = {
            let mut g = self
                .generation
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            *g += 1;
            self.meta.insert(GENERATION, &(*g as i64).to_be_bytes())?;
            *g
        };
        self.db.flush()?;
        self.marker.advance(generation);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
