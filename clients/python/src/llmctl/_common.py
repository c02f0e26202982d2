"""What the sync and async clients share: the socket path, checking input, building requests,
mapping the daemon's errors, advice, and the fail-open state."""

from __future__ import annotations

import datetime as _dt
import logging
import math
import os
import secrets
import socket as _socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import grpc

from . import _errors as errors
from ._fail_static import FAIL_STATIC_FOR, RESTART_WAIT
from ._fail_static import phase as outage_phase
from .v1 import limiter_pb2 as pb

logger = logging.getLogger("llmctl")

FAIL_MODES = ("open", "closed")
# The daemon's own bounds (README, "The contract").
MAX_UNITS = 1_000_000_000
MAX_WAIT_SECONDS = 3600.0
MAX_KEY_BYTES = 256
MAX_HEADERS = 64
MAX_HEADER_BYTES = 4096
MAX_ERROR_MESSAGE = 2000
# How long a call other than a waiting acquire may take before the daemon counts as unreachable.
CALL_TIMEOUT = 10.0
# After a failed call, calls skip the daemon for this long (doubling up to the max), then try again.
RETRY_MIN = 0.25
RETRY_MAX = 2.0
WARN_EVERY = 60.0
CHANNEL_OPTIONS = [
    # gRPC would send the socket path as the HTTP/2 authority, which the daemon's server refuses.
    ("grpc.default_authority", "localhost"),
    # gRPC would otherwise back off up to two minutes between reconnects to a restarted daemon.
    # (Not grpc.min_reconnect_backoff_ms: it is also the connect timeout, which must stay long
    # enough for a busy daemon to answer the handshake.)
    # At most 250 ms between tries: a restarted daemon is used again within that (RESTART_WAIT).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 250),
    # Subchannels are otherwise shared process-wide: a new client would inherit another's
    # backoff after a failure and fail at once although the daemon is back.
    ("grpc.use_local_subchannel_pool", 1),
    # A status of many keys is larger than gRPC's 4 MiB default: take whatever the daemon sends.
    ("grpc.max_receive_message_length", -1),
]

Seconds = Union[int, float, _dt.timedelta]


def default_socket(env: Optional[Mapping[str, str]] = None) -> str:
    """The daemon's socket: ``$LLMCTL_SOCKET``, else ``$XDG_RUNTIME_DIR/llmctl/llmctl.sock``,
    else ``/tmp/llmctl-$UID/llmctl.sock``."""
    env = os.environ if env is None else env
    path = env.get("LLMCTL_SOCKET")
    if path:
        return path
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "llmctl", "llmctl.sock")
    return f"/tmp/llmctl-{os.getuid()}/llmctl.sock"


def socket_path(socket: Union[str, "os.PathLike[str]", None]) -> str:
    return os.path.abspath(os.fspath(socket) if socket is not None else default_socket())


def new_client_id() -> str:
    """An id unique to this process (and client): host, pid and a random part."""
    host = _socket.gethostname()[:64] or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(4)}"


def check_client_id(client_id: str) -> str:
    if not isinstance(client_id, str) or not client_id or len(client_id) > 256:
        raise errors.InvalidArgument(
            f"client_id {client_id!r} must be a string of 1 to 256 printable characters; "
            "leave it out to get one unique to this process"
        )
    if not client_id.isprintable():
        raise errors.InvalidArgument(f"client_id {client_id!r} has control characters")
    return client_id


def check_fail_mode(fail_mode: str) -> str:
    if fail_mode not in FAIL_MODES:
        raise errors.InvalidArgument(
            f"fail_mode {fail_mode!r} is not one of 'open' (calls go on unlimited while the daemon "
            "is unreachable) or 'closed' (they raise llmctl.Unavailable)"
        )
    return fail_mode


def check_key(key: Any, what: str = "key") -> str:
    if not isinstance(key, str):
        raise errors.InvalidArgument(
            f"{what} must be a string such as 'openai/gpt-5.5', not {type(key).__name__} {key!r}"
        )
    if not key:
        raise errors.InvalidArgument(f"{what} is empty; name a quota such as 'openai/gpt-5.5'")
    if len(key.encode()) > MAX_KEY_BYTES:
        raise errors.InvalidArgument(
            f"{what} {key[:40]!r}... is {len(key.encode())} bytes; keys are at most {MAX_KEY_BYTES}"
        )
    if not key.isprintable():
        raise errors.InvalidArgument(
            f"{what} {key!r} has control characters; use a path like 'openai/gpt-5.5'"
        )
    if any(not part for part in key.split("/")):
        raise errors.InvalidArgument(
            f"{what} {key!r} has an empty segment; write it as a path like 'anthropic/org-a/opus'"
        )
    return key


def check_units(name: str, value: Any, allow_none: bool = False) -> Optional[int]:
    if value is None and allow_none:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.InvalidArgument(f"{name} must be a whole number, not {value!r}")
    if value < 0:
        raise errors.InvalidArgument(f"{name} = {value} is negative; give 0 or more")
    if value > MAX_UNITS:
        raise errors.InvalidArgument(f"{name} = {value} is over the limit of {MAX_UNITS:,}")
    return value


def seconds(name: str, value: Optional[Seconds], default: float, maximum: float) -> float:
    if value is None:
        return default
    if isinstance(value, _dt.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise errors.InvalidArgument(f"{name} must be a number of seconds or a timedelta, not {value!r}")
    if value < 0:
        raise errors.InvalidArgument(f"{name} = {value} is negative; give 0 to answer at once")
    if value > maximum:
        raise errors.InvalidArgument(f"{name} = {value} s is over the maximum of {maximum:g} s")
    return float(value)


def acquire_request(
    key: Optional[str],
    *,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    priority: int,
    max_wait: Optional[Seconds],
    run_id: Optional[str],
    route_group: Optional[str],
    client_id: str,
    profile: Optional[str] = None,
    output_tokens_declared: Optional[bool] = None,
) -> Tuple[pb.AcquireRequest, float]:
    """Checks an acquire's input and builds its request; also returns the wait in seconds."""
    if route_group is not None:
        check_key(route_group, "route_group")
        if key:
            raise errors.InvalidArgument(
                f"give key or route_group, not both (key {key!r}, route_group {route_group!r}): "
                "with a route group the daemon picks the member key"
            )
        key = ""
    else:
        key = check_key(key)
    if profile is not None:
        check_name(profile, "profile", "'interactive', 'batch' or one configured in [profiles]")
    req = check_units("requests", requests)
    if req == 0:
        raise errors.InvalidArgument("requests = 0; a lease is for at least 1 request")
    if isinstance(priority, bool) or not isinstance(priority, int) or not -(2**31) <= priority < 2**31:
        raise errors.InvalidArgument(f"priority must be a 32-bit whole number, not {priority!r}")
    if run_id is not None:
        check_run_id(run_id)
    if output_tokens_declared is not None and not isinstance(output_tokens_declared, bool):
        raise errors.InvalidArgument(
            f"output_tokens_declared must be True, False or None, not {output_tokens_declared!r}"
        )
    wait = seconds("max_wait", max_wait, MAX_WAIT_SECONDS, MAX_WAIT_SECONDS)
    msg = pb.AcquireRequest(
        key=key,
        requests=req,
        input_tokens=check_units("input_tokens", input_tokens),
        output_tokens=check_units("output_tokens", output_tokens),
        priority=priority,
        max_wait_ms=int(round(wait * 1000)),
        client_id=client_id,
        run_id=run_id or "",
    )
    # Set only when given (optional on the wire: not set is none).
    if route_group:
        msg.route_group = route_group
    if profile:
        msg.profile = profile
    if output_tokens_declared is not None:
        msg.output_tokens_declared = output_tokens_declared
    return msg, wait


def check_name(value: Any, what: str, examples: str) -> str:
    """A name such as a profile: a non-empty printable string."""
    if not isinstance(value, str):
        raise errors.InvalidArgument(f"{what} must be a string such as {examples}, not {value!r}")
    if not value:
        raise errors.InvalidArgument(f"{what} is empty; name one such as {examples}, or leave it out")
    if len(value.encode()) > MAX_KEY_BYTES or not value.isprintable():
        raise errors.InvalidArgument(
            f"{what} {value[:40]!r} must be at most {MAX_KEY_BYTES} bytes of printable characters"
        )
    return value


def check_run_id(run_id: Any) -> str:
    if not isinstance(run_id, str):
        raise errors.InvalidArgument(f"run_id must be a string, not {run_id!r}")
    if len(run_id.encode()) > MAX_KEY_BYTES or not run_id.isprintable():
        raise errors.InvalidArgument(
            f"run_id {run_id[:40]!r} must be at most {MAX_KEY_BYTES} bytes of printable characters"
        )
    return run_id


def not_granted(resp: pb.AcquireResponse, req: pb.AcquireRequest) -> errors.NotGranted:
    """The exception for an acquire the daemon answered with not granted: `RunBudgetExceeded`
    when the run's budget is spent, else `NotGranted`."""
    key = resp.key or req.key or req.route_group
    not_before = from_unix_ms(resp.not_before_unix_ms)
    waited = resp.waited_ms / 1000.0
    if resp.reason_code == pb.REFUSAL_REASON_RUN_BUDGET:
        return errors.RunBudgetExceeded(key, resp.reason, not_before, waited, req.run_id)
    return errors.NotGranted(key, resp.reason, not_before, waited, refusal_code(resp.reason_code))


def refusal_code(code: int) -> str:
    """A `RefusalReason` as the short name `NotGranted.reason_code` carries ("" when unspecified;
    the number of a reason newer than this client, never a guess)."""
    if code == pb.REFUSAL_REASON_UNSPECIFIED:
        return ""
    try:
        name: str = pb.RefusalReason.Name(code)
    except ValueError:
        return str(code)
    return name.removeprefix("REFUSAL_REASON_").lower()


# A first attempt further ahead than this is a mistake (milliseconds given for seconds, say).
_FUTURE_SLACK = 300.0


def first_attempt_ms(value: Any) -> int:
    """``first_attempt`` (a datetime, or Unix seconds) in Unix milliseconds; None is 0."""
    if value is None:
        return 0
    if isinstance(value, _dt.datetime):
        ts = value.timestamp()  # a naive datetime is taken as local time, as Python does
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        ts = float(value)
    else:
        raise errors.InvalidArgument(
            f"first_attempt must be a datetime or Unix seconds (time.time()), not {value!r}"
        )
    if not math.isfinite(ts) or ts <= 0:
        raise errors.InvalidArgument(
            f"first_attempt = {value!r} is not a time; give when attempt 1 started, as a "
            "datetime or Unix seconds (time.time())"
        )
    if ts > time.time() + _FUTURE_SLACK:
        raise errors.InvalidArgument(
            f"first_attempt = {value!r} is in the future; give when attempt 1 started, as a "
            "datetime or Unix seconds (time.time(), not milliseconds)"
        )
    return int(ts * 1000)


def run_budget_request(
    run_id: Any, max_calls: Any, max_retries: Any, max_wall_time: Any
) -> pb.SetRunBudgetRequest:
    check_run_id(run_id)
    if not run_id:
        raise errors.InvalidArgument("run_id is empty; name the run, as in acquire(..., run_id=...)")
    calls = check_units("max_calls", max_calls, allow_none=True)
    retries = check_units("max_retries", max_retries, allow_none=True)
    # The contract reads 0 as "no bound", so a 0 given here cannot mean what it says.
    if calls == 0:
        raise errors.InvalidArgument(
            "max_calls = 0 would refuse every call; give 1 or more, or None for no bound"
        )
    if retries == 0:
        raise errors.InvalidArgument(
            "max_retries = 0 cannot be set: the daemon reads 0 as no bound; give 1 or more, "
            "or None for no bound"
        )
    wall = seconds("max_wall_time", max_wall_time, 0.0, 366 * 86400.0) if max_wall_time is not None else None
    if wall is not None and wall <= 0:
        raise errors.InvalidArgument(
            f"max_wall_time = {max_wall_time!r}; give a positive number of seconds, or None for no bound"
        )
    return pb.SetRunBudgetRequest(
        run_id=run_id,
        max_calls=calls or 0,
        max_retries=retries or 0,
        max_wall_time_ms=max(1, int(round(wall * 1000))) if wall is not None else 0,
    )


def from_unix_ms(ms: int) -> Optional[_dt.datetime]:
    if ms <= 0:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000.0, tz=_dt.timezone.utc)


@dataclass(frozen=True)
class Advice:
    """What the daemon advises after a report.

    ``action`` is ``"done"``, ``"retry"`` (after ``retry_after`` seconds), ``"give_up"`` or
    ``"fallback"`` (to ``fallback_key``), or ``"unknown"`` for an advice this client does not
    know (a newer daemon's): nothing is retried then; ``reason`` says why.
    """

    action: str
    retry_after: float = 0.0
    fallback_key: Optional[str] = None
    reason: str = ""

    @property
    def should_retry(self) -> bool:
        return self.action == "retry"


_ACTIONS = {pb.DONE: "done", pb.RETRY: "retry", pb.GIVE_UP: "give_up", pb.FALLBACK: "fallback"}


def advice_from(resp: pb.ReportResponse) -> Advice:
    return Advice(
        action=_ACTIONS.get(resp.advice, "unknown"),
        retry_after=max(0, resp.retry_after_ms) / 1000.0,
        fallback_key=resp.fallback_key or None,
        reason=resp.reason,
    )


# Headers the daemon reads: rate-limit levels and when to come back. Others are not sent.
_HEADER_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "ratelimit", "x-codex-")
_HEADER_NAMES = {"retry-after", "retry-after-ms", "x-ms-retry-after-ms", "x-should-retry"}


def limit_headers(headers: Any) -> Dict[str, str]:
    """The rate-limit and retry headers of a response (any mapping or list of pairs)."""
    if headers is None:
        return {}
    items = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, str] = {}
    for name, value in items:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        name = str(name).strip().lower()
        if name in _HEADER_NAMES or name.startswith(_HEADER_PREFIXES):
            value = str(value)
            if len(name) + len(value) <= MAX_HEADER_BYTES and len(out) < MAX_HEADERS:
                out[name] = value
    return out


@dataclass
class Outcome:
    """What happened to one provider call, as a report tells the daemon."""

    status: int
    headers: Dict[str, str]
    input_tokens: Optional[int] = None
    cached_input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    error_type: str = ""
    error_message: str = ""
    stream_started: bool = False
    usage_known: Optional[bool] = None
    # When the answer (its status and headers) reached the caller, Unix ms; 0: when the report
    # is sent. A window the provider keeps frees the request's place a second after it.
    answered_unix_ms: int = 0


def unix_ms() -> int:
    """Now, in Unix milliseconds."""
    return time.time_ns() // 1_000_000


def report_request(
    lease_id: str,
    outcome: Outcome,
    estimate: Tuple[int, int],
    attempt: int,
    first_attempt_unix_ms: int = 0,
) -> pb.ReportRequest:
    """Checks an outcome and builds its report. Sizes left unknown are the lease's estimate, so
    a success whose usage nobody read is settled at what was reserved."""
    status = outcome.status
    if isinstance(status, bool) or not isinstance(status, int) or not (status == 0 or 100 <= status <= 999):
        raise errors.InvalidArgument(
            f"status = {status!r} is not an HTTP status; give 100..999, or 0 when no answer came"
        )
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise errors.InvalidArgument(f"attempt = {attempt!r}; the first attempt is 1")
    known_in = check_units("input_tokens", outcome.input_tokens, allow_none=True)
    known_out = check_units("output_tokens", outcome.output_tokens, allow_none=True)
    cached = check_units("cached_input_tokens", outcome.cached_input_tokens, allow_none=True) or 0
    answered = outcome.answered_unix_ms
    if isinstance(answered, bool) or not isinstance(answered, int) or answered < 0:
        raise errors.InvalidArgument(
            f"answered_unix_ms = {answered!r}; give when the answer came in Unix milliseconds, "
            "or 0 for when the report is sent"
        )
    usage_known = outcome.usage_known
    if usage_known is None:
        usage_known = known_in is not None or known_out is not None
    inp = known_in if known_in is not None else estimate[0]
    out = known_out if known_out is not None else estimate[1]
    if cached > inp:
        raise errors.InvalidArgument(
            f"cached_input_tokens = {cached} is more than input_tokens = {inp}; "
            "input_tokens counts all input, cached included"
        )
    return pb.ReportRequest(
        lease_id=lease_id,
        status_code=status,
        headers=limit_headers(outcome.headers),
        input_tokens=inp,
        cached_input_tokens=cached,
        output_tokens=out,
        error_type=outcome.error_type or "",
        error_message=(outcome.error_message or "")[:MAX_ERROR_MESSAGE],
        stream_started=bool(outcome.stream_started),
        attempt=attempt,
        usage_known=bool(usage_known),
        first_attempt_unix_ms=first_attempt_unix_ms,
        answered_unix_ms=answered,
    )


_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}
# Attempts a call makes while the daemon cannot be asked (conformance/advice.json).
FAIL_OPEN_ATTEMPTS = 4


CANCELLED = "cancelled"
"""The error type of a request its caller gave up on after sending it (conformance/advice.json)."""


def local_advice(outcome: Outcome, attempt: int = 1) -> Advice:
    """Advice when the daemon cannot be asked (fail open): the same classes, no shared state,
    at most `FAIL_OPEN_ATTEMPTS` attempts (the rules: conformance/advice.json)."""
    status, etype = outcome.status, (outcome.error_type or "").lower()
    if any(w in etype for w in ("insufficient_quota", "billing", "spend", "credit", "quota_exhausted")):
        return Advice(
            "give_up", 0.0, None, f"quota or spend cap exhausted ({etype}); decided without the llmctl daemon"
        )
    if 200 <= status < 300 and not etype:
        return Advice("done", 0.0, None, "")
    if etype == CANCELLED and (status == 0 or 200 <= status < 300):
        return Advice("give_up", 0.0, None, "the caller gave up on the request")
    retryable = status in _RETRYABLE or status >= 500 or status == 0
    if 200 <= status < 300:
        retryable = not outcome.stream_started and any(w in etype for w in ("overloaded", "rate_limit"))
    if not retryable:
        return Advice(
            "give_up", 0.0, None, f"status {status} is not retryable; decided without the llmctl daemon"
        )
    if attempt >= FAIL_OPEN_ATTEMPTS:
        return Advice(
            "give_up",
            0.0,
            None,
            f"status {status} on attempt {attempt} of {FAIL_OPEN_ATTEMPTS}; decided without the daemon",
        )
    delay = 1.0
    given = {str(k).lower(): v for k, v in (outcome.headers or {}).items()}
    for name in ("retry-after-ms", "retry-after"):
        raw = given.get(name)
        try:
            if raw is not None:
                value = float(raw) / (1000.0 if name.endswith("-ms") else 1.0)
                if math.isfinite(value) and value >= 0:
                    delay = min(max(value, 0.0), 60.0)
                    break
        except ValueError:
            continue
    return Advice("retry", delay, None, f"status {status} is retryable; decided without the llmctl daemon")


def rpc_error(e: grpc.RpcError, socket: str, what: str) -> errors.LlmctlError:
    """The typed exception for a gRPC error from the daemon."""
    code = e.code() if hasattr(e, "code") else None
    detail = (e.details() if hasattr(e, "details") else None) or str(e)
    if what == "complete" and code in (
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
    ):
        return errors.ClaimRefused(detail, code.name)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return errors.InvalidArgument(detail)
    if code == grpc.StatusCode.NOT_FOUND:
        return errors.LeaseNotFound(detail)
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return errors.NeverFits(detail)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return errors.DaemonBusy(detail)
    if code == grpc.StatusCode.DATA_LOSS:
        return errors.ClaimHistoryLost(detail)
    if is_unreachable(e):
        return unavailable(socket, detail)
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return errors.LlmctlError(
            f"the llmctl daemon on {socket} does not know {what}: it is older than this client; "
            "upgrade and restart it",
            code.name,
        )
    name = code.name if code is not None else "UNKNOWN"
    return errors.LlmctlError(f"llmctl {what} failed ({name}): {detail}", name)


def is_unreachable(e: grpc.RpcError) -> bool:
    code = e.code() if hasattr(e, "code") else None
    return code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def unavailable(socket: str, detail: str) -> errors.Unavailable:
    return errors.Unavailable(
        f"no llmctl daemon is answering on {socket} ({detail}); start one with `llmctl daemon`, "
        "or point LLMCTL_SOCKET at a running one",
        socket,
    )


class Health:
    """Whether the daemon answers, for fail-open clients: after a failure, calls skip the daemon
    for a short, growing while, then try it again; one warning a minute at most."""

    def __init__(self, socket: str, fail_mode: str, fail_static_for: float = FAIL_STATIC_FOR) -> None:
        self.socket = socket
        self.fail_open = fail_mode == "open"
        self.fail_static_for = fail_static_for
        self._lock = threading.Lock()
        self._down = False
        self._retry_at = 0.0
        self._backoff = RETRY_MIN
        self._warned_at: Optional[float] = None
        # Whether the daemon ever answered this client, and when the current outage began.
        self._answered = False
        self._down_since = 0.0
        # Bumped whenever the daemon may have lost its state (it went away), so that a lease's
        # unknown-lease answer can be told from a caller's mistake.
        self.epoch = 0

    @property
    def down(self) -> bool:
        return self._down

    def should_try(self) -> bool:
        if not self.fail_open:
            return True
        with self._lock:
            return not self._down or time.monotonic() >= self._retry_at

    def failed(self, detail: str) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._down:
                self.epoch += 1
                self._backoff = RETRY_MIN
                self._down_since = now
            self._down = True
            self._retry_at = now + self._backoff
            self._backoff = min(self._backoff * 2, RETRY_MAX)
            warn = self._warned_at is None or now - self._warned_at >= WARN_EVERY
            if warn:
                self._warned_at = now
        if warn and self._answered:
            logger.warning(
                "the llmctl daemon on %s stopped answering (%s); calls wait up to %.0f s for it to "
                "come back, then are limited with what this client last knew of each key for up to "
                "%.0f s, then proceed without limits (fail_mode='open') until it is back",
                self.socket,
                detail,
                RESTART_WAIT,
                self.fail_static_for,
            )
        elif warn:
            logger.warning(
                "no llmctl daemon is answering on %s (%s); calls proceed without limits "
                "(fail_mode='open') and llmctl reconnects when it is back",
                self.socket,
                detail,
            )

    def phase(self) -> str:
        """ "up" while the daemon answers; in an outage, its phase (conformance/fail_static.json):
        "wait" for a restarting daemon, "static" (limit with what was known), or "open"."""
        with self._lock:
            if not self._down:
                return "up"
            if not self.fail_open:
                return "open"
            return outage_phase(time.monotonic() - self._down_since, self._answered, self.fail_static_for)

    @property
    def down_since(self) -> float:
        """When the current outage began (monotonic seconds)."""
        return self._down_since

    def restarting(self) -> bool:
        """Whether calls should wait for the daemon rather than be sent without it."""
        return self.phase() == "wait"

    def ok(self) -> None:
        self._answered = True
        if not self._down:
            return
        with self._lock:
            was_down, self._down = self._down, False
            self._backoff = RETRY_MIN
        if was_down:
            logger.info("llmctl daemon on %s is answering again; calls are limited again", self.socket)

    def session_lost(self) -> None:
        with self._lock:
            self.epoch += 1
