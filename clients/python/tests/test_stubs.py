"""The committed gRPC stubs are what the pinned grpcio-tools makes of proto/ today."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from conftest import REPO

GENERATED = ("limiter_pb2.py", "limiter_pb2.pyi", "limiter_pb2_grpc.py")
COMMITTED = REPO / "clients" / "python" / "src" / "llmctl" / "v1"


def test_the_committed_stubs_match_the_proto(tmp_path: Path) -> None:
    subprocess.run(
        [str(REPO / "scripts" / "gen-python-stubs"), str(tmp_path)],
        check=True,
        env={**os.environ, "PYTHON": sys.executable},
    )
    fresh = tmp_path / "llmctl" / "v1"
    assert sorted(p.name for p in fresh.iterdir()) == sorted(GENERATED)
    stale = [n for n in GENERATED if (fresh / n).read_bytes() != (COMMITTED / n).read_bytes()]
    assert not stale, (
        f"{', '.join(stale)} differ from what proto/ generates; run scripts/gen-python-stubs "
        "and commit the result"
    )


def test_the_stubs_are_made_by_the_pinned_grpcio_tools() -> None:
    pins = (REPO / "clients" / "python" / "requirements-test.txt").read_text()
    pinned = re.search(r"^grpcio-tools==(\S+)", pins, re.M)
    assert pinned, "requirements-test.txt must pin grpcio-tools exactly"
    assert metadata.version("grpcio-tools") == pinned.group(1)
    grpc_stub = (COMMITTED / "limiter_pb2_grpc.py").read_text()
    assert f"GRPC_GENERATED_VERSION = '{pinned.group(1)}'" in grpc_stub


def test_the_package_requires_runtimes_the_stubs_accept() -> None:
    """The stubs check the protobuf and grpcio versions at import; pyproject's lower bounds
    must satisfy those checks, or an install that pip accepts fails at import."""
    pb2 = (COMMITTED / "limiter_pb2.py").read_text()
    m = re.search(r"ValidateProtobufRuntimeVersion\(\s*\S+,\s*(\d+),\s*(\d+),\s*(\d+),", pb2)
    assert m, "no runtime version check found in limiter_pb2.py"
    gencode = tuple(int(x) for x in m.groups())
    grpc_gen = re.search(
        r"GRPC_GENERATED_VERSION = '([\d.]+)'", (COMMITTED / "limiter_pb2_grpc.py").read_text()
    )
    assert grpc_gen
    pyproject = (REPO / "clients" / "python" / "pyproject.toml").read_text()
    pb_min = re.search(r'"protobuf>=([\d.]+)"', pyproject)
    grpc_min = re.search(r'"grpcio>=([\d.]+)"', pyproject)
    assert pb_min and grpc_min
    as_tuple = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    assert as_tuple(pb_min.group(1)) >= gencode, (
        f"protobuf>={pb_min.group(1)} allows runtimes older than gencode {gencode}"
    )
    assert as_tuple(grpc_min.group(1)) >= as_tuple(grpc_gen.group(1))
