//! The data dir itself: one daemon at a time (a lock file inside it, held for the daemon's life),
//! and a marker beside the store saying how far the store had got (its generation), when the
//! daemon was last seen alive, and whether it stopped cleanly.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DataDirError {
    #[error(
        "the data dir {dir} is in use by another llmctl daemon{}; stop it, or give this daemon a \
         data dir of its own (--data-dir DIR)",
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    Locked { dir: PathBuf, pid: Option<u32> },
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is {found}, not a folder owned by this user; remove it or pass --data-dir DIR"
    )]
    NotOurs { path: PathBuf, found: String },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DataDirError {
    let path = path.to_path_buf();
    move |source| DataDirError::Io { what, path, source }
}

/// Opens (or creates, 0600) a file of the daemon's own for reading and writing, refusing a
/// symbolic link in its place rather than following it.
fn open_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Names inside the data dir that are not the store's.
pub const LOCK_FILE: &str = "lock";
pub const MARKER_FILE: &str = "marker";
pub const ASIDE_PREFIX: &str = "unreadable-";

/// Held while the daemon runs: no other daemon may open the store in this folder.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    pub dir: PathBuf,
}

/// Creates `dir` (0700) if needed, checks it is a folder of this user, and locks it.
pub fn lock(dir: &Path) -> Result<DataDirLock, DataDirError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("create the data dir", dir))?;
    let meta = std::fs::symlink_metadata(dir).map_err(io("inspect the data dir", dir))?;
    let uid = crate::paths::current_uid();
    use std::os::unix::fs::MetadataExt;
    if !meta.is_dir() || meta.uid() != uid {
        let found = if meta.file_type().is_symlink() {
            "a symbolic link".to_string()
        } else if !meta.is_dir() {
            "not a folder".to_string()
        } else {
            format!("owned by uid {}", meta.uid())
        };
        return Err(DataDirError::NotOurs {
            path: dir.to_path_buf(),
            found,
        });
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("set permissions on", dir))?;
    }
    let path = dir.join(LOCK_FILE);
    let mut file = open_private(&path).map_err(io("open the lock file", &path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(DataDirError::Locked {
                dir: dir.to_path_buf(),
                pid: text.trim().parse().ok(),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io("lock", &path)(e)),
    }
    file.set_len(0).map_err(io("write", &path))?;
    let _ = writeln!(file, "{}", std::process::id());
    Ok(DataDirLock {
        _file: file,
        dir: dir.to_path_buf(),
    })
}

/// What the marker said when the daemon started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerState {
    /// The store's generation after its last flush that the marker saw.
    pub generation: u64,
    /// When the daemon that wrote it was last known alive.
    pub alive_unix_ms: i64,
    /// It stopped cleanly, with everything flushed.
    pub clean: bool,
}

const MARKER_LEN: usize = 96;

impl MarkerState {
    /// Fixed width, so a rewrite in place never needs new space on the disk.
    fn encode(&self) -> [u8; MARKER_LEN] {
        let text = format!(
            "llmctl-marker v1 generation={:020} alive={:020} clean={}",
            self.generation,
            self.alive_unix_ms.max(0),
            u8::from(self.clean)
        );
        let mut out = [b' '; MARKER_LEN];
        out[..text.len()].copy_from_slice(text.as_bytes());
        out[MARKER_LEN - 1] = b'\n';
        out
    }

    fn decode(bytes: &[u8]) -> Option<MarkerState> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut fields = text.split_whitespace();
        if (fields.next()?, fields.next()?) != ("llmctl-marker", "v1") {
            return None;
        }
        let mut value = |name: &str| {
            fields
                .next()
                .and_then(|f| f.strip_prefix(name))
                .and_then(|v| v.parse::<i64>().ok())
        };
        Some(MarkerState {
            generation: u64::try_from(value("generation=")?).ok()?,
            alive_unix_ms: value("alive=")?,
            clean: value("clean=")? == 1,
        })
    }
}

/// The marker file beside the store.
#[derive(Debug)]
pub struct Marker {
    file: File,
    generation: AtomicU64,
}

impl Marker {
    /// Opens the marker in `dir`, returning what it said before (None: there was none, or it
    /// could not be read).
    pub fn open(dir: &Path) -> Result<(Marker, Option<MarkerState>), DataDirError> {
        let path = dir.join(MARKER_FILE);
        let file = open_private(&path).map_err(io("open the marker", &path))?;
        let mut buf = [0u8; MARKER_LEN];
        let before = match file.read_at(&mut buf, 0) {
            Ok(n) if n == MARKER_LEN => MarkerState::decode(&buf),
            _ => None,
        };
        let marker = Marker {
            file,
            generation: AtomicU64::new(before.map_or(0, |b| b.generation)),
        };
        Ok((marker, before))
    }

    /// The store is durable up to `generation`.
    pub fn advance(&self, generation: u64) {
        self.generation.fetch_max(generation, Ordering::SeqCst);
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Rewrites the marker in place (no fsync: it guards against the process dying, and a stale
    /// marker only ever errs towards "nothing was lost").
    pub fn write(&self, alive_unix_ms: i64, clean: bool) -> std::io::Result<()> {
        let state = MarkerState {
            generation: self.generation(),
            alive_unix_ms,
            clean,
        };
        self.file.write_all_at(&state.encode(), 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trips_and_rejects_garbage() {
        let s = MarkerState {
            generation: 42,
            alive_unix_ms: 1_700_000_000_000,
            clean: true,
        };
        assert_eq!(MarkerState::decode(&s.encode()), Some(s));
        assert_eq!(MarkerState::decode(b"llmctl-marker v1 generation=x"), None);
        assert_eq!(MarkerState::decode(&[0xff; MARKER_LEN]), None);
    }

    #[test]
    fn a_locked_data_dir_names_the_holder_and_a_symlink_is_refused() {
        let tmp = std::env::temp_dir().join(format!("llmctl-datadir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let dir = tmp.join("state");
        let held = lock(&dir).expect("first lock");
        // Locks are per open file: a second open in this process conflicts as another daemon's would.
        let err = lock(&dir).expect_err("second lock");
        assert!(
            matches!(err, DataDirError::Locked { pid: Some(p), .. } if p == std::process::id()),
            "{err}"
        );
        assert!(err.to_string().contains("--data-dir"), "{err}");
        drop(held);
        lock(&dir).expect("free again");
        let link = tmp.join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        let err = lock(&link).expect_err("symlink");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let mode = std::fs::metadata(&dir).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn the_marker_survives_reopen() {
        let dir = std::env::temp_dir().join(format!("llmctl-marker-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let (m, before) = Marker::open(&dir).expect("open");
        assert_eq!(before, None);
        m.advance(7);
        m.advance(5);
        m.write(99, false).expect("write");
        drop(m);
        let (m, before) = Marker::open(&dir).expect("open");
        assert_eq!(
            before,
            Some(MarkerState {
                generation: 7,
                alive_unix_ms: 99,
                clean: false
            })
        );
        assert_eq!(m.generation(), 7);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
