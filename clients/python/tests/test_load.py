"""Eight processes of eight workers on one key, through the openai SDK and llmctl's transport,
against a fake provider that counts rejected requests against its limit (as OpenAI does), with
the daemon configured to the provider's limit: every job succeeds, the provider rejects at most
1 % of requests, and the run takes at most 1.1 times the ideal time the provider's limit allows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from workers import run_processes

from conftest import Daemon, Provider

PROCESSES = 8
THREADS = 8
JOBS = 320  # 40 per process
RPM = 1200  # 20 requests a second
BURST = 20
LATENCY_S = 0.02
KEY = "openai/load"


def test_eight_processes_share_one_limit_without_429s(start_daemon: Any, start_provider: Any) -> None:
    daemon: Daemon = start_daemon(f'[keys."{KEY}"]\nrequests_per_minute = {RPM}\nburst_requests = {BURST}\n')
    provider: Provider = start_provider(
        "--rpm",
        str(RPM),
        "--burst-requests",
        str(BURST),
        "--count-rejected",
        "--latency",
        f"{int(LATENCY_S * 1000)}ms",
    )
    worker = str(Path(__file__).with_name("load_worker.py"))
    per_process = JOBS // PROCESSES
    command = [sys.executable, worker, daemon.socket, provider.url, KEY, str(per_process), str(THREADS)]

    def before_go() -> None:
        # Both start full: the daemon's bucket starts empty, so let it fill; the provider's
        # fills on reset.
        daemon.wait_full(KEY, "requests")
        provider.reset()

    started, results = run_processes([command] * PROCESSES, before_go)

    ok = sum(r["ok"] for r in results)
    failed = sum(r["failed"] for r in results)
    wall = max(r["last_end"] for r in results) - started
    stats = provider.stats()
    rejected = stats["responses"].get("429", 0)
    ideal = (JOBS - BURST) / (RPM / 60) + LATENCY_S
    print(
        f"\nload: {PROCESSES} processes x {THREADS} workers, {JOBS} jobs, provider {RPM} rpm burst {BURST} "
        f"(rejected requests counted): {ok} ok, {failed} failed; provider saw {stats['requests']} requests, "
        f"{rejected} 429s ({100 * rejected / max(1, stats['requests']):.2f} %); wall {wall:.2f} s, ideal {ideal:.2f} s, "
        f"ratio {wall / ideal:.3f}"
    )
    assert failed == 0 and ok == JOBS, [e for r in results for e in r["errors"]]
    assert rejected <= 0.01 * stats["requests"], stats
    assert stats["responses"].get("200") == JOBS
    assert wall <= 1.1 * ideal, f"wall {wall:.2f} s is over 1.1 x the ideal {ideal:.2f} s"
