"""The client against a daemon holding much: a status larger than gRPC's default message size."""

from __future__ import annotations

import llmctl
from conftest import Daemon


def test_a_status_past_four_mib_is_read_whole_and_can_be_filtered(daemon: Daemon) -> None:
    # Every rate-limit header a key keeps, each as long as kept.
    names = [f"x-ratelimit-{f}-{d}" for d in ("requests", "tokens") for f in ("limit", "remaining", "reset")]
    names += [
        f"anthropic-ratelimit-{d}-{f}"
        for d in ("requests", "tokens", "input-tokens", "output-tokens")
        for f in ("limit", "remaining", "reset")
    ]
    headers = {n: "9" * 64 for n in names + ["x-should-retry"]}
    with llmctl.Client(daemon.socket, fail_mode="closed") as c:
        for k in range(2000):
            lease = c.acquire(f"big/model-{k}")
            lease.report(200, headers=headers)
        st = c.status()
        assert len(st.keys) >= 2000
        assert st.ByteSize() > 4 << 20
        only = c.status(key_prefix="big/model-42")
        assert sorted(k.key for k in only.keys) == sorted(
            ["big/model-42"] + [f"big/model-42{i}" for i in range(10)]
        )
