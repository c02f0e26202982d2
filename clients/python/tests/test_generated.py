"""The committed synchronous modules are what scripts/gen-python-sync makes of their asyncio
sources today (as test_stubs.py checks the gRPC stubs against proto/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "clients" / "python" / "src" / "llmctl"
# Each generated module, and the asyncio source it is made from.
GENERATED = {"_client.py": "_aio.py", "_httpx_sync.py": "_httpx_aio.py"}


def test_the_sync_modules_match_their_async_sources(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen-python-sync"), str(tmp_path)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(GENERATED)
    stale = [n for n in GENERATED if (tmp_path / n).read_bytes() != (PACKAGE / n).read_bytes()]
    assert not stale, (
        f"{', '.join(stale)} differ from what their asyncio sources generate; run "
        "scripts/gen-python-sync and commit the result"
    )


def test_the_generated_modules_say_where_they_come_from() -> None:
    for generated, source in GENERATED.items():
        first = (PACKAGE / generated).read_text().splitlines()[0]
        assert first.startswith(f"# Generated from {source} by scripts/gen-python-sync"), first
        note = (PACKAGE / source).read_text().splitlines()[0]
        assert note.startswith(f"# The source of {generated}:"), note
