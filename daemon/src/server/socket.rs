//! The Unix socket: its folder 0700 and the socket 0600 (0750 / 0660 with a group), one daemon
//! per socket by a lock file, and a stale socket replaced only when nothing answers on it.

use std::fs::{File, OpenOptions, Permissions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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
    #[error("socket_group {0:?} is not a group on this host (`getent group` lists them); create it or remove socket_group")]
    UnknownGroup(String),
    #[error(
        "the socket folder {path} {why}, so another user could listen in the daemon's place; \
         remove it (the daemon creates it 0700) or pass --socket PATH in a folder of your own"
    )]
    UnsafeFolder { path: PathBuf, why: String },
    #[error("{path} {why}; it is not replaced: remove it, or pass --socket PATH to another path")]
    NotASocket { path: PathBuf, why: String },
}

/// Refuses a socket folder another user could tamper with: a symbolic link, not a folder, owned
/// by someone else, or writable by others (unless sticky, as /tmp is). What ssh-agent and tmux
/// check of theirs.
fn check_folder(dir: &Path) -> Result<(), SocketError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).map_err(io("inspect the socket folder", dir))?;
    let unsafe_because = |why: String| {
        Err(SocketError::UnsafeFolder {
            path: dir.to_path_buf(),
            why,
        })
    };
    if meta.file_type().is_symlink() {
        return unsafe_because("is a symbolic link".into());
    }
    if !meta.is_dir() {
        return unsafe_because("is not a folder".into());
    }
    let uid = crate::paths::current_uid();
    if meta.uid() != uid && meta.uid() != 0 {
        return unsafe_because(format!(
            "belongs to uid {}, not to this user (uid {uid})",
            meta.uid()
        ));
    }
    let mode = meta.mode();
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return unsafe_because(format!(
            "has mode {:o}: others may write in it",
            mode & 0o7777
        ));
    }
    Ok(())
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

/// Looks a group's id up by name (through the system's group database, so directory groups
/// count too), or takes a number as the id itself.
fn group_id(name: &str) -> Result<u32, SocketError> {
    let unknown = || SocketError::UnknownGroup(name.to_string());
    match nix::unistd::Group::from_name(name) {
        Ok(Some(g)) => Ok(g.gid.as_raw()),
        Ok(None) => name.parse().map_err(|_| unknown()),
        Err(e) => Err(io("look up socket_group", Path::new("/etc/group"))(
            e.into(),
        )),
    }
}

/// Binds `path` for this daemon alone.
pub fn bind(path: &Path, group: Option<&str>) -> Result<(UnixListener, SocketGuard), SocketError> {
    let gid = group.map(group_id).transpose()?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let created = std::fs::symlink_metadata(dir).is_err();
    if created {
        std::fs::create_dir_all(dir).map_err(io("create the socket folder", dir))?;
        let mode = if gid.is_some() { 0o750 } else { 0o700 };
        std::fs::set_permissions(dir, Permissions::from_mode(mode))
            .map_err(io("set permissions on", dir))?;
    }
    check_folder(dir)?;
    if let Some(gid) = gid {
        // The group must reach the socket: the folder (made here, or one of ours made by
        // systemd's RuntimeDirectory) is opened to it.
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir).map_err(io("inspect the socket folder", dir))?;
        if created || (meta.uid() == crate::paths::current_uid() && meta.gid() != gid) {
            std::os::unix::fs::chown(dir, None, Some(gid))
                .map_err(io("change the group of", dir))?;
            std::fs::set_permissions(dir, Permissions::from_mode(0o750))
                .map_err(io("set permissions on", dir))?;
        }
    }
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        // A symbolic link (dangling or not) in its place is refused, never followed.
        .custom_flags(libc::O_NOFOLLOW)
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
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(SocketError::NotASocket {
                path: path.to_path_buf(),
                why: if meta.file_type().is_symlink() {
                    "is a symbolic link".into()
                } else {
                    "exists and is not a socket".into()
                },
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_found_by_name_or_taken_as_a_number() {
        assert_eq!(group_id("root").expect("root"), 0);
        assert_eq!(group_id("4242").expect("number"), 4242);
        let e = group_id("no-such-group-llmctl").expect_err("unknown");
        assert!(matches!(e, SocketError::UnknownGroup(ref n) if n == "no-such-group-llmctl"));
        assert!(e.to_string().contains("getent group"), "{e}");
    }
}
