"""The client against a daemon holding much: a status larger than gRPC's default message size."""

from __future__ import annotations

import llmctl
from conftest import Daemon


def test_a_status_past_four_mib_is_read_whole_and_can_be_filtered(daemon: Daemon) -> None:
    headers = {f"x-ratelimit-limit-extra-{i}": "9" * 128 for i in range(32)}
    with llmctl.Client(daemon.socket, fail_mode="closed") as c:
        for k in range(1200):
            lease = c.acquire(f"big/model-{k}")
            lease.report(200, headers=headers)
        st = c.status()
        assert len(st.keys) >= 1200
        assert st.ByteSize() > 4 << 20
        only = c.status(key_prefix="big/model-42")
        assert sorted(k.key for k in only.keys) == sorted(
            ["big/model-42"] + [f"big/model-42{i}" for i in range(10)]
        )
