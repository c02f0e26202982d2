"""What sync and async leases share: their fields, and turning a report's arguments into an
outcome."""

from __future__ import annotations

import datetime as _dt
import threading
from typing import Any, Callable, Mapping, Optional

from . import _errors as errors
from ._common import Advice, Outcome, first_attempt_ms, from_unix_ms, report_request
from ._outcome import from_exception, from_object
from .v1 import limiter_pb2 as pb


class LeaseBase:
    """A grant from the daemon: capacity reserved on ``key`` until the lease is reported.

    A lease from a fail-open client while the daemon was unreachable is a no-op: ``limited`` is
    False, and reporting it only computes advice locally.
    """

    def __init__(
        self,
        *,
        key: str,
        lease_id: str,
        input_tokens: int,
        output_tokens: int,
        attempt: int,
        waited: float = 0.0,
        expires: Optional[_dt.datetime] = None,
        limited: bool = True,
        epoch: int = 0,
        first_attempt_ms: int = 0,
        on_done: Optional[Callable[[], None]] = None,
    ) -> None:
        self.key = key
        self.lease_id = lease_id
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.attempt = attempt
        self.waited = waited
        self.expires = expires
        self.limited = limited
        # When attempt 1 started (Unix ms), sent with the report; 0: the daemon takes the grant.
        self._first_attempt_ms = first_attempt_ms
        self.advice: Optional[Advice] = None
        self._epoch = epoch
        self._reported = False
        self._lock = threading.Lock()
        # Called once, at the first report: the client counts its leases in flight per key.
        self._on_done = on_done

    @property
    def reported(self) -> bool:
        return self._reported

    @property
    def first_attempt(self) -> Optional[_dt.datetime]:
        """When attempt 1 of this call started, as given to acquire or report (None: not given,
        and the daemon counts the profile's deadline from this lease's grant)."""
        return from_unix_ms(self._first_attempt_ms)

    def _report_request(
        self, outcome: Outcome, attempt: Optional[int], first_attempt: Any
    ) -> pb.ReportRequest:
        first_ms = self._first_attempt_ms if first_attempt is None else first_attempt_ms(first_attempt)
        return report_request(
            self.lease_id,
            outcome,
            (self.input_tokens, self.output_tokens),
            self.attempt if attempt is None else attempt,
            first_ms,
        )

    def __repr__(self) -> str:
        state = "reported" if self._reported else "open"
        kind = "" if self.limited else ", unlimited (daemon unreachable)"
        return f"<{type(self).__name__} {self.lease_id or '-'} on {self.key!r}, {state}{kind}>"

    def _claim_report(self) -> None:
        """Marks the lease reported, once; a second report is a caller's mistake."""
        with self._lock:
            if self._reported:
                raise errors.LeaseNotFound(
                    f"lease {self.lease_id or '(unlimited)'} on {self.key!r} was already reported; "
                    "acquire a new lease for another attempt"
                )
            self._reported = True
            done, self._on_done = self._on_done, None
        if done is not None:
            done()

    def _unclaim(self) -> None:
        with self._lock:
            self._reported = False

    @staticmethod
    def _outcome(
        status: int,
        headers: Optional[Mapping[str, str]],
        input_tokens: Optional[int],
        cached_input_tokens: Optional[int],
        output_tokens: Optional[int],
        error_type: Optional[str],
        error_message: Optional[str],
        stream_started: bool,
        usage_known: Optional[bool],
    ) -> Outcome:
        return Outcome(
            status=status,
            headers=dict(headers or {}),
            input_tokens=input_tokens,
            cached_input_tokens=cached_input_tokens,
            output_tokens=output_tokens,
            error_type=error_type or "",
            error_message=error_message or "",
            stream_started=stream_started,
            usage_known=usage_known,
        )

    @staticmethod
    def _outcome_of(obj: Any, stream_started: Optional[bool]) -> Outcome:
        out = from_object(obj)
        if stream_started is not None:
            out.stream_started = stream_started
        return out

    @staticmethod
    def _exit_outcome(exc: Optional[BaseException]) -> Outcome:
        if exc is None:
            # Left without a report and without an error: nobody knows what happened, so the
            # daemon settles it at its estimate.
            return Outcome(status=0, headers={}, error_type="unreported", usage_known=False)
        return from_exception(exc)
