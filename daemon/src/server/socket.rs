//! The Unix socket: its folder 0700 and the socket 0600 (0750 / 0660 with a group), one daemon
//! per socket by a lock file, and a stale socket replaced only when nothing answers on it.

use std::fs::{File, OpenOptions, Permissions};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use thiserror::Error;
use tokio::net::UnixListener;

#[derive(Debug, Error)]
pub enum SocketError {
    #[error(
        "another llmctl daemon is already serving {socket} (its lock {lock} is held); stop it, or \
         pass --socket PATH to run a second daemon"
    )]
    AlreadyRunning { socket: PathBuf, lock: PathBuf },
    #[error(
        "something is already answering on {0}; stop it or pass --socket PATH to use another socket"
    )]
    InUse(PathBuf),
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("socket_group {0:?} is not a group on this host (see /etc/group); create it or remove socket_group")]
    UnknownGroup(String),
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SocketError {
    let path = path.to_path_buf();
    move |source| SocketError::Io { what, path, source }
}

/// Holds the socket's lock while the daemon runs; removes the socket file when dropped.
pub struct SocketGuard {
    pub path: PathBuf,
    _lock: File,
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Looks a group's id up in /etc/group.
fn group_id(name: &str) -> Result<u32, SocketError> {
    let text =
        std::fs::read_to_string("/etc/group").map_err(io("read", Path::new("/etc/group")))?;
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let (n, _, gid) = (f.next()?, f.next()?, f.next()?);
            (n == name).then(|| gid.parse().ok()).flatten()
        })
        .next()
        .or_else(|| name.parse().ok())
        .ok_or_else(|| SocketError::UnknownGroup(name.to_string()))
}

/// Binds `path` for this daemon alone.
pub fn bind(path: &Path, group: Option<&str>) -> Result<(UnixListener, SocketGuard), SocketError> {
    let gid = group.map(group_id).transpose()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(io("create the socket folder", dir))?;
        let mode = if gid.is_some() { 0o750 } else { 0o700 };
        std::fs::set_permissions(dir, Permissions::from_mode(mode))
            .map_err(io("set permissions on", dir))?;
        if let Some(gid) = gid {
            std::os::unix::fs::chown(dir, None, Some(gid))
                .map_err(io("change the group of", dir))?;
        }
    }
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io("open the lock file", &lock_path))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(SocketError::AlreadyRunning {
                socket: path.to_path_buf(),
                lock: lock_path,
            })
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io("lock", &lock_path)(e)),
    }
    if path.exists() {
        // Only a socket nobody answers on is stale.
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(SocketError::InUse(path.to_path_buf()));
        }
        std::fs::remove_file(path).map_err(io("remove the stale socket", path))?;
    }
    let listener = UnixListener::bind(path).map_err(io("bind", path))?;
    let mode = if gid.is_some() { 0o660 } else { 0o600 };
    std::fs::set_permissions(path, Permissions::from_mode(mode))
        .map_err(io("set permissions on", path))?;
    if let Some(gid) = gid {
        std::os::unix::fs::chown(path, None, Some(gid)).map_err(io("change the group of", path))?;
    }
    Ok((
        listener,
        SocketGuard {
            path: path.to_path_buf(),
            _lock: lock,
        },
    ))
}
