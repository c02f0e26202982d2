"""Limiting while the daemon cannot be asked (the rules: conformance/fail_static.json).

A daemon that answered this client before and went away is taken as restarting: for
`RESTART_WAIT` calls wait for it. Then, until `FAIL_STATIC_FOR`, each key is limited with what
this client last knew of it: the rate of the grants it received on the key in the `WINDOW`
before the outage (the smaller of their count over their span and one over the median time
between two: a burst granted at once is not the rate), a second of it as a burst, and the most
of its leases in flight at once. Then calls fail open. A key it knows nothing of is not
limited. Pure: times are passed in (monotonic seconds)."""

from __future__ import annotations

import math
import threading
from collections import deque
from typing import Deque, Dict, Iterable, Optional, Tuple

RESTART_WAIT = 5.0
FAIL_STATIC_FOR = 60.0
WINDOW = 10.0
# Grants remembered per key, and keys remembered.
MAX_GRANTS = 4096
MAX_KEYS = 1024


def phase(outage: float, answered: bool, fail_static_for: float = FAIL_STATIC_FOR) -> str:
    """ "wait", "static" or "open", for an outage of ``outage`` seconds."""
    if not answered:
        return "open"
    if outage < RESTART_WAIT:
        return "wait"
    if outage < fail_static_for:
        return "static"
    return "open"


def static_limits(grants_ago: Iterable[float], in_flight_max: int) -> Optional[Tuple[float, int, int]]:
    """(rate per second, burst, concurrency) from the grants ``grants_ago`` seconds before the
    outage; None when none was in the window."""
    ago = sorted(g for g in grants_ago if 0 <= g <= WINDOW)
    if not ago:
        return None
    span = min(max(ago[-1], 1.0), WINDOW)
    rate = len(ago) / span
    gaps = sorted(b - a for a, b in zip(ago, ago[1:]))
    if gaps:
        median = (
            gaps[len(gaps) // 2] if len(gaps) % 2 else (gaps[len(gaps) // 2 - 1] + gaps[len(gaps) // 2]) / 2
        )
        if median > 0:
            rate = min(rate, 1.0 / median)
    return rate, max(1, math.floor(rate)), max(1, in_flight_max)


class _Key:
    def __init__(self) -> None:
        self.grants: Deque[float] = deque(maxlen=MAX_GRANTS)
        self.in_flight = 0
        # (when, in flight then) at each grant, for the most in flight in the window.
        self.peaks: Deque[Tuple[float, int]] = deque(maxlen=MAX_GRANTS)
        # The static phase's bucket: (outage start it belongs to, limits, level, last refill).
        self.bucket: Optional[Tuple[float, Tuple[float, int, int], float, float]] = None


class FailStatic:
    """What a client knows of each key, and the static phase's local buckets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: Dict[str, _Key] = {}

    def _key(self, key: str) -> _Key:
        k = self._keys.get(key)
        if k is None:
            if len(self._keys) >= MAX_KEYS:
                # Forget the key granted longest ago.
                oldest = min(
                    self._keys, key=lambda n: self._keys[n].grants[-1] if self._keys[n].grants else 0.0
                )
                del self._keys[oldest]
            k = self._keys[key] = _Key()
        return k

    def granted(self, key: str, now: float, by_daemon: bool = True) -> None:
        """A lease on ``key`` began (granted by the daemon, or by the static phase)."""
        with self._lock:
            k = self._key(key)
            k.in_flight += 1
            if by_daemon:
                k.grants.append(now)
                k.peaks.append((now, k.in_flight))

    def released(self, key: str) -> None:
        """A lease on ``key`` ended (reported)."""
        with self._lock:
            k = self._keys.get(key)
            if k is not None and k.in_flight > 0:
                k.in_flight -= 1

    def limits(self, key: str, outage_start: float) -> Optional[Tuple[float, int, int]]:
        with self._lock:
            k = self._keys.get(key)
            if k is None:
                return None
            return self._limits(k, outage_start)

    @staticmethod
    def _limits(k: _Key, outage_start: float) -> Optional[Tuple[float, int, int]]:
        peak = max((n for t, n in k.peaks if 0 <= outage_start - t <= WINDOW), default=0)
        return static_limits((outage_start - t for t in k.grants), peak)

    def take(self, key: str, outage_start: float, now: float) -> Optional[float]:
        """In the static phase: 0.0 when a call on ``key`` may go now (counted in flight), else
        how long to wait before asking again; None when ``key`` is not limited (nothing known)."""
        with self._lock:
            k = self._keys.get(key)
            if k is None:
                return None
            if k.bucket is None or k.bucket[0] != outage_start:
                limits = self._limits(k, outage_start)
                if limits is None:
                    return None
                k.bucket = (outage_start, limits, float(limits[1]), now)
            start, (rate, burst, concurrency), level, last = k.bucket
            level = min(float(burst), level + (now - last) * rate)
            if k.in_flight >= concurrency:
                k.bucket = (start, (rate, burst, concurrency), level, now)
                return 0.05
            if level >= 1.0:
                k.bucket = (start, (rate, burst, concurrency), level - 1.0, now)
                k.in_flight += 1
                return 0.0
            k.bucket = (start, (rate, burst, concurrency), level, now)
            return (1.0 - level) / rate
