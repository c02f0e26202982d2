"""Installing as a Python user does, with no Rust toolchain: both wheels (scripts/build-wheels)
into a fresh venv, no daemon running; the client starts one by itself on first use, many
processes starting at once start one, and it stops by itself when idle."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

from conftest import REPO, Provider, wait_until
from llmctl._autostart import answers

WHEELS = Path(os.environ.get("LLMCTL_WHEELS") or REPO / "target" / "wheels")
# The SDK the call is made with, pinned as in requirements-test.txt.
SDK = ["openai==3.57.0", "httpx==0.28.1"]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = sorted(WHEELS.glob("*.whl"))
    names = {w.name.split("-")[0] for w in wheels}
    if names != {"llmctl_client", "llmctl_daemon"}:
        pytest.fail(
            f"{WHEELS} should hold the llmctl-client and llmctl-daemon wheels; build them with scripts/build-wheels"
        )
    root = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    pip = [str(root / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet", "install"]
    # The client's dependencies and the SDK from the index; llmctl itself only from the wheels.
    subprocess.run([*pip, "grpcio>=1.80.1", "protobuf>=6.31.1", *SDK], check=True)
    subprocess.run([*pip, "--no-index", "--find-links", str(WHEELS), "llmctl-client[daemon]"], check=True)
    assert (root / "bin" / "llmctl").is_file(), "the llmctl-daemon wheel puts llmctl in the venv"
    return root


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Dict[str, str]]:
    """An environment like a fresh user's: no daemon, its own folders, no llmctl on PATH but the
    venv's (found beside the interpreter)."""
    (tmp_path / "run").mkdir(mode=0o700)
    env = {
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PATH": "/usr/bin:/bin",
        "LLMCTL_AUTOSTART": "1",
        "LLMCTL_AUTOSTART_IDLE_EXIT": "3s",
    }
    yield env
    sock = str(tmp_path / "run" / "llmctl" / "llmctl.sock")
    for pid in daemons_on(sock):
        os.kill(pid, 9)


def daemons_on(sock: str) -> List[int]:
    """The llmctl daemons serving `sock`, by their command lines."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            args = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"daemon" in args and sock.encode() in args:
            out.append(int(d.name))
    return out


CALL = """
import sys, time
t = time.monotonic()
import httpx, openai
import llmctl
from llmctl.httpx import LimitedTransport
oa = openai.OpenAI(base_url=sys.argv[1] + "/v1", api_key="test",
                   http_client=httpx.Client(transport=LimitedTransport(key="openai/{model}")))
r = oa.chat.completions.create(model="gpt-install", messages=[{"role": "user", "content": "hi"}], max_tokens=8)
assert r.choices, r
print(f"{time.monotonic() - t:.2f}")
"""


def test_a_fresh_venv_limits_its_first_call_with_a_daemon_it_started(
    venv: Path, home: Dict[str, str], start_provider: Callable[..., Provider]
) -> None:
    provider = start_provider()
    sock = os.path.join(home["XDG_RUNTIME_DIR"], "llmctl", "llmctl.sock")
    assert not answers(sock)
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-c", CALL, provider.url],
        env=home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    print(f"first call through a daemon started on first use: {r.stdout.strip()} s from start-up")
    status = subprocess.run(
        [str(venv / "bin" / "llmctl"), "status", "--socket", sock],
        env=home,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert status.returncode == 0, status.stderr
    assert "openai/gpt-install" in status.stdout, status.stdout
    assert (Path(home["XDG_STATE_HOME"]) / "llmctl" / "daemon.log").is_file()
    # Nothing lingers: the daemon stops by itself once idle (3 s here).
    t = time.monotonic()
    wait_until(lambda: not daemons_on(sock), 15, "the started daemon to exit when idle", every=0.1)
    print(f"idle exit {time.monotonic() - t:.1f} s after the last call")


STARTER = """
import llmctl
c = llmctl.Client()
with c.acquire("local/start", max_wait=30) as lease:
    assert c.limited, "limited by a daemon"
c.close()
"""


def test_twenty_processes_starting_at_once_make_one_daemon(venv: Path, home: Dict[str, str]) -> None:
    sock = os.path.join(home["XDG_RUNTIME_DIR"], "llmctl", "llmctl.sock")
    procs = [
        subprocess.Popen(
            [str(venv / "bin" / "python"), "-c", STARTER], env=home, stderr=subprocess.PIPE, text=True
        )
        for _ in range(20)
    ]
    errors = []
    for p in procs:
        _, err = p.communicate(timeout=60)
        if p.returncode != 0:
            errors.append(err)
    assert not errors, errors[0]
    assert len(daemons_on(sock)) == 1, daemons_on(sock)
    out = subprocess.run(
        [str(venv / "bin" / "llmctl"), "status", "--socket", sock, "--json"],
        env=home,
        capture_output=True,
        text=True,
    )
    keys = {k["key"]: k for k in json.loads(out.stdout)["keys"]}
    assert keys["local/start"]["granted_total"] == 20, keys


def test_autostart_off_starts_nothing(venv: Path, home: Dict[str, str]) -> None:
    sock = os.path.join(home["XDG_RUNTIME_DIR"], "llmctl", "llmctl.sock")
    code = "import llmctl\nc = llmctl.Client()\n\nwith c.acquire('local/off', max_wait=1):\n    pass\nprint(c.limited)"
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        env={**home, "LLMCTL_AUTOSTART": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False", "failed open, unlimited"
    assert not daemons_on(sock)


READMES = [REPO / "README.md", *sorted((REPO / "clients").glob("*/README.md"))]


def install_lines() -> List[str]:
    """Every `pip install` line of the READMEs' shell blocks, and the inline ones that install
    from the checkout, as written."""
    lines = []
    for readme in READMES:
        text = readme.read_text()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S):
            for line in block.splitlines():
                line = line.split("#", 1)[0].strip()
                if line.startswith("pip install"):
                    lines.append(line)
        lines += re.findall(r"`(pip install \./[^`]+)`", text)
    return sorted(set(lines))


def test_the_readmes_name_the_projects_own_distributions() -> None:
    lines = install_lines()
    assert any('"llmctl-client[daemon]"' in line for line in lines), lines
    for line in lines:
        names = [a for a in shlex.split(line)[2:] if not a.startswith("-") and a != str(WHEELS)]
        for name in names:
            # PyPI's `llmctl` (and npm's) is another project: only ours may be named.
            assert not re.fullmatch(r"llmctl(\[.*\])?(==.*)?", name), f"{line!r} installs PyPI's llmctl"


@pytest.mark.parametrize("line", install_lines())
def test_each_readme_install_line_installs_ours_with_the_index_reachable(line: str, tmp_path: Path) -> None:
    """The line as a user types it, in a fresh venv, PyPI reachable: what gets installed is this
    project's llmctl-client (and llmctl-daemon where the line asks for it), never PyPI's llmctl.
    The wheels are found where the published ones would be (PIP_FIND_LINKS, pip's own setting)."""
    root = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    env = {
        **os.environ,
        "PATH": f"{root / 'bin'}:{os.environ['PATH']}",
        "VIRTUAL_ENV": str(root),
        "PIP_FIND_LINKS": str(WHEELS),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    args = shlex.split(line)
    r = subprocess.run(
        [str(root / "bin" / "python"), "-m", *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, f"{line}:\n{r.stdout}\n{r.stderr}"
    assert "does not provide the extra" not in r.stderr, r.stderr
    show = subprocess.run(
        [
            str(root / "bin" / "python"),
            "-c",
            "import importlib.metadata as m, json, llmctl\n"
            "d = {x.metadata['Name'].lower(): x.version for x in m.distributions()}\n"
            "print(json.dumps({'dists': d, 'module': llmctl.__file__, 'client': hasattr(llmctl, 'Client')}))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert show.returncode == 0, show.stderr
    got = json.loads(show.stdout)
    assert got["dists"].get("llmctl-client") == "0.1.0", got
    assert "llmctl" not in got["dists"], f"PyPI's llmctl was installed: {got}"
    assert got["client"] and str(root) in got["module"], got
    if "[daemon]" in line:
        assert got["dists"].get("llmctl-daemon") == "0.1.0", got
        assert (root / "bin" / "llmctl").is_file()
