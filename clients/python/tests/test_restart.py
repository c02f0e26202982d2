"""A daemon restarted under load: the clients wait for it (a daemon that answered a moment ago
and went away is restarting), reconnect as soon as it is back, and no call goes unlimited, so
the provider refuses none."""

from __future__ import annotations

import threading
import time
from typing import Callable, List, Tuple

import httpx2
import openai

import llmctl
from conftest import Daemon, Provider
from llmctl.httpx import LimitedTransport

MESSAGES = [{"role": "user", "content": "hi"}]


def test_a_restart_under_load_costs_no_429_and_no_unlimited_call(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    daemon = start_daemon('[keys."openai/restart"]\nrequests_per_minute = 600\n')
    provider = start_provider("--rpm", "600", "--burst-requests", "10", "--completion-tokens", "4")
    daemon.wait_full("openai/restart")
    client = llmctl.Client(daemon.socket)  # fail_mode="open", as the README's
    oa = openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/{model}", client=client)),
        max_retries=0,
    )
    calls: List[Tuple[float, bool, str]] = []  # (when the call ended, limited, error)
    lock = threading.Lock()
    stop = time.monotonic() + 6.0

    def worker() -> None:
        while time.monotonic() < stop:
            err = ""
            try:
                oa.chat.completions.create(model="restart", messages=MESSAGES, max_tokens=4)
            except openai.APIError as e:
                err = type(e).__name__
            with lock:
                calls.append((time.monotonic(), bool(client.limited), err))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    daemon.stop()  # SIGTERM: the daemon flushes its state and goes
    time.sleep(0.3)
    daemon.start()  # returns once the socket answers
    up = time.monotonic()
    for t in threads:
        t.join()
    client.close()
    after = sorted(c[0] for c in calls if c[0] > up)
    assert after, "calls went on after the restart"
    print(f"first call done {after[0] - up:.3f} s after the restarted daemon answered; {len(calls)} calls")
    assert [c for c in calls if c[2]] == [], "an error reached the caller"
    assert [c for c in calls if not c[1]] == [], "a call went unlimited across the restart"
    assert provider.stats()["responses"].get("429", 0) == 0, provider.stats()


def test_a_daemon_gone_for_good_is_waited_for_then_its_keys_are_paced_as_they_were(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    """kill -9 and no restart: calls wait 5 s for the daemon, then each key is limited with the
    rate and concurrency this client was getting on it (not sent unlimited), so the provider
    refuses next to none."""
    daemon = start_daemon('[keys."openai/gone"]\nrequests_per_minute = 600\n')
    provider = start_provider("--rpm", "600", "--burst-requests", "10", "--completion-tokens", "4")
    daemon.wait_full("openai/gone")
    client = llmctl.Client(daemon.socket)
    oa = openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/{model}", client=client)),
        max_retries=0,
    )
    ends: List[float] = []
    errors: List[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + 11.0

    def worker() -> None:
        while time.monotonic() < stop:
            try:
                oa.chat.completions.create(model="gone", messages=MESSAGES, max_tokens=4)
            except openai.APIError as e:
                with lock:
                    errors.append(type(e).__name__)
            with lock:
                ends.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    daemon.kill9()
    gone = time.monotonic()
    for t in threads:
        t.join()
    client.close()
    paced = [t for t in ends if t > gone + 5.5]
    rate = len(paced) / (stop - gone - 5.5)
    print(f"after the wait: {rate:.1f} calls/s paced (the limit: 10/s); {len(errors)} errors")
    assert paced, "calls went on, paced, after the wait"
    assert rate < 15, "paced near the rate the client was getting, not unlimited"
    assert provider.stats()["responses"].get("429", 0) <= 5, provider.stats()
    assert errors == [], errors


def test_a_daemon_killed_and_restarted_after_3_s_under_load_costs_at_most_5_429s(
    start_daemon: Callable[..., Daemon], start_provider: Callable[..., Provider]
) -> None:
    """kill -9, then the daemon back 3 s later on its persisted state: calls wait for it (it is
    restarting), so nothing goes unlimited and the provider refuses next to none."""
    daemon = start_daemon('[keys."openai/killed"]\nrequests_per_minute = 600\n')
    provider = start_provider("--rpm", "600", "--burst-requests", "10", "--completion-tokens", "4")
    daemon.wait_full("openai/killed")
    client = llmctl.Client(daemon.socket)
    oa = openai.OpenAI(
        base_url=provider.url + "/v1",
        api_key="test",
        http_client=httpx2.Client(transport=LimitedTransport(key="openai/{model}", client=client)),
        max_retries=0,
    )
    errors: List[str] = []
    done = [0]
    lock = threading.Lock()
    stop = time.monotonic() + 9.0

    def worker() -> None:
        while time.monotonic() < stop:
            try:
                oa.chat.completions.create(model="killed", messages=MESSAGES, max_tokens=4)
            except openai.APIError as e:
                with lock:
                    errors.append(type(e).__name__)
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    daemon.kill9()
    time.sleep(3.0)
    daemon.start()
    for t in threads:
        t.join()
    client.close()
    refused = provider.stats()["responses"].get("429", 0)
    print(f"kill -9, back after 3 s: {done[0]} calls, {refused} provider 429s, {len(errors)} errors")
    assert errors == [], errors
    assert refused <= 5, provider.stats()
