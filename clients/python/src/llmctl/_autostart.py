"""Starting the daemon on first use: where no daemon answers on the default socket and an
``llmctl`` binary is found (this environment's, then ``PATH``), a client starts
``llmctl daemon --idle-exit 10m`` detached in a session of its own, its log under the state
folder, and waits for it (bounded). Many processes starting at once start one daemon: the
data folder's lock decides, the others' daemons exit and every client connects to the one that
won. ``LLMCTL_AUTOSTART=0`` turns this off; ``LLMCTL_AUTOSTART_IDLE_EXIT`` changes the bound."""

from __future__ import annotations

import logging
import os
import shutil
import socket as _socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List, Mapping, Optional

logger = logging.getLogger("llmctl")

# How long a client waits for the daemon it started (or another process started) to answer.
START_WAIT = 10.0
DEFAULT_IDLE_EXIT = "10m"
# The daemons this process started, kept so that they are reaped if they exit (another
# process's daemon won the data folder) and not reported as leaked.
_started: "List[subprocess.Popen[bytes]]" = []


def answers(path: str) -> bool:
    """Whether something accepts connections on the Unix socket at ``path``."""
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def enabled(env: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if env is None else env
    return env.get("LLMCTL_AUTOSTART", "1").strip().lower() not in ("0", "false", "no", "off")


def find_binary(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """This environment's ``llmctl`` (the llmctl-daemon wheel puts it beside the interpreter),
    else the first on ``PATH``."""
    env = os.environ if env is None else env
    for d in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        p = d / "llmctl"
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return shutil.which("llmctl", path=env.get("PATH"))


def state_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """``$XDG_STATE_HOME/llmctl``, else ``~/.local/state/llmctl``: the daemon's own data folder."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "llmctl"


def ensure_daemon(path: str) -> bool:
    """Starts a daemon on ``path`` unless one answers there; True once one answers (within
    `START_WAIT`), False when none could be started (no binary, or it did not come up; the
    client then fails open or closed as it was told)."""
    if answers(path):
        return True
    binary = find_binary()
    if binary is None:
        logger.warning(
            "llmctl: no daemon on %s and no llmctl binary in this environment or on PATH to start "
            'one; install it with `pip install "llmctl-client[daemon]"`, or start one with `llmctl daemon`',
            path,
        )
        return False
    log_dir = state_dir()
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        log = open(log_dir / "daemon.log", "ab")
    except OSError as e:
        logger.warning("llmctl: cannot write the daemon's log under %s: %s", log_dir, e)
        return False
    idle = os.environ.get("LLMCTL_AUTOSTART_IDLE_EXIT") or DEFAULT_IDLE_EXIT
    try:
        proc = subprocess.Popen(
            [binary, "daemon", "--socket", path, "--idle-exit", idle],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        logger.warning("llmctl: cannot start %s daemon: %s", binary, e)
        return False
    finally:
        log.close()
    _started.append(proc)
    # Reaped whenever it exits (it lost the data folder to another daemon, or went idle).
    threading.Thread(target=proc.wait, name="llmctl-daemon-reaper", daemon=True).start()
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if answers(path):
            logger.info(
                "llmctl: started a daemon on %s (%s; log in %s)", path, binary, log_dir / "daemon.log"
            )
            return True
        proc.poll()  # one that lost the data folder to another process's daemon exits: reaped
        time.sleep(0.02)
    logger.warning(
        "llmctl: the daemon started on %s did not answer within %.0f s; see %s",
        path,
        START_WAIT,
        log_dir / "daemon.log",
    )
    return False
