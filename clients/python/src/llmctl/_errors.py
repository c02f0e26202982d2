"""The exceptions the llmctl client raises."""

from __future__ import annotations

import datetime as _dt
import time
from typing import Optional


class LlmctlError(Exception):
    """Base of every error the llmctl client raises.

    ``code`` is the gRPC status name when the daemon answered with an error (``"INVALID_ARGUMENT"``,
    ``"NOT_FOUND"``, ...), and ``message`` the words that say what was wrong.
    """

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Unavailable(LlmctlError, ConnectionError):
    """No llmctl daemon answered on the socket (raised with ``fail_mode="closed"``)."""

    def __init__(self, message: str, socket: Optional[str] = None) -> None:
        super().__init__(message, "UNAVAILABLE")
        self.socket = socket


class NotGranted(LlmctlError):
    """The daemon could not grant the lease within ``max_wait``.

    ``not_before`` is the earliest time (an aware UTC datetime) at which asking again may succeed,
    or None when the daemon does not know; ``reason`` is the daemon's explanation in words, and
    ``reason_code`` the same for a program: ``"capacity"``, ``"concurrency"``, ``"cooldown"``,
    ``"breaker_open"``, ``"run_budget"``, ``"route_group"``, ``"stopping"``, ``"too_large"``,
    ``"daily_quota"`` (the provider's daily quota is spent until ``not_before``: asking again
    before then will not help), ``"plan_window"`` (a plan window, the 5-hour or 7-day window of a
    subscription, is closed until ``not_before``), ``"fail_static"`` (the daemon is away and what
    this client last knew of the key allows no call in time; no daemon said it), the number of a
    reason newer than this client, or ``""`` when the daemon did not say.
    """

    def __init__(
        self,
        key: str,
        reason: str,
        not_before: Optional[_dt.datetime],
        waited: float = 0.0,
        reason_code: str = "",
    ) -> None:
        when = f"; ask again after {not_before.isoformat()}" if not_before else ""
        super().__init__(f"llmctl did not grant {key!r} in time: {reason or 'no capacity'}{when}")
        self.key = key
        self.reason = reason
        self.reason_code = reason_code
        self.not_before = not_before
        self.waited = waited

    @property
    def retry_after(self) -> Optional[float]:
        """Seconds from now until ``not_before`` (0 when it has passed), or None if unknown."""
        if self.not_before is None:
            return None
        return max(0.0, self.not_before.timestamp() - time.time())


class RunBudgetExceeded(NotGranted):
    """The run (``run_id`` on acquire) has used up its budget of calls, retries or wall time
    (see `Client.set_run_budget`): no more calls are granted for it. ``reason`` says which bound
    was reached; asking again does not help, so ``not_before`` is usually None."""

    def __init__(
        self,
        key: str,
        reason: str,
        not_before: Optional[_dt.datetime],
        waited: float = 0.0,
        run_id: str = "",
    ) -> None:
        super().__init__(key, reason, not_before, waited, "run_budget")
        self.run_id = run_id
        self.message = f"llmctl refused {key!r} for run {run_id!r}: {reason}"
        self.args = (self.message,)


class Pending(LlmctlError):
    """`run_once` found the work claimed by someone else who has not completed it yet.

    ``key`` is the idempotency key and ``since`` (an aware UTC datetime, or None if the daemon did
    not say) when the other claim was made. The claim lapses after its ttl if never completed;
    ask again later, or wait for the other worker's result.
    """

    def __init__(self, key: str, since: Optional[_dt.datetime]) -> None:
        when = f" since {since.isoformat()}" if since else ""
        super().__init__(f"{key!r} is being done by another worker{when}; its result is not stored yet")
        self.key = key
        self.since = since


class InvalidArgument(LlmctlError, ValueError):
    """Malformed input: an empty key, a negative size, a status that is no HTTP status, ..."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "INVALID_ARGUMENT")


class LeaseNotFound(LlmctlError, LookupError):
    """The lease is unknown to the daemon or was already settled (reported or expired)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "NOT_FOUND")


class NeverFits(LlmctlError):
    """The request is larger than a bucket of the key can ever hold; it would wait forever."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "FAILED_PRECONDITION")


class DaemonBusy(LlmctlError):
    """The daemon's own bounds (keys, waiters or leases) are full."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "RESOURCE_EXHAUSTED")


class ClaimHistoryLost(LlmctlError):
    """The daemon's claim store lost records and does not know this job: it may have been done
    before the loss. Check the job's own output; to do it, claim again with
    ``accept_lost_history=True``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "DATA_LOSS")


class ClaimRefused(LlmctlError):
    """A `complete` the daemon refused: the job was never claimed (or its record expired), it is
    already done with another result, or another user holds its claim."""
