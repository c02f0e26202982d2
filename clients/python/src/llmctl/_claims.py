"""Idempotency records, as the sync and async clients share them: checking a claim's input,
building its requests and reading its answer."""

from __future__ import annotations

import datetime as _dt
import unicodedata
from dataclasses import dataclass
from typing import Any, Optional, Union

from . import _errors as errors
from ._common import Seconds, from_unix_ms, seconds
from .v1 import limiter_pb2 as pb

# The daemon's bounds on idempotency records (README, "Idempotency").
MAX_CLAIM_KEY_BYTES = 1024
MAX_CLAIM_TTL_SECONDS = 7 * 86400.0
# The most any daemon stores; its max_claim_result (1 MiB by default) may be lower.
MAX_RESULT_BYTES = 16 << 20
# run_once's claim lasts this long unless told otherwise: the work must be done (and completed)
# within it, or another worker may claim it again.
DEFAULT_RUN_ONCE_TTL = 600.0

BytesLike = Union[bytes, bytearray, memoryview]

_STATES = {
    pb.ClaimResponse.CLAIMED: "claimed",
    pb.ClaimResponse.PENDING: "pending",
    pb.ClaimResponse.DONE: "done",
}


@dataclass(frozen=True)
class ClaimResult:
    """The daemon's answer to a claim.

    ``state`` is ``"claimed"`` (the work is yours: do it, then `complete`), ``"pending"`` (another
    worker claimed it at ``since`` and has not completed it) or ``"done"`` (``result`` holds the
    stored bytes). ``since`` is an aware UTC datetime for ``"claimed"`` and ``"pending"``, None
    for ``"done"``; ``result`` is None unless ``"done"``.
    """

    key: str
    state: str
    result: Optional[bytes] = None
    since: Optional[_dt.datetime] = None

    @property
    def claimed(self) -> bool:
        return self.state == "claimed"


def check_claim_key(key: Any) -> str:
    if not isinstance(key, str):
        raise errors.InvalidArgument(
            f"idempotency key must be a string such as a job id or a hash of the request, "
            f"not {type(key).__name__} {key!r}"
        )
    size = len(key.encode())
    if size == 0:
        raise errors.InvalidArgument(
            "idempotency key is empty; name the work, e.g. a job id or a hash of the request"
        )
    if size > MAX_CLAIM_KEY_BYTES:
        raise errors.InvalidArgument(
            f"idempotency key {key[:40]!r}... is {size} bytes; keys are at most "
            f"{MAX_CLAIM_KEY_BYTES} (hash a longer one)"
        )
    if any(unicodedata.category(c) == "Cc" for c in key):
        raise errors.InvalidArgument(f"idempotency key {key!r} has control characters")
    return key


def claim_request(key: str, ttl: Seconds, accept_lost_history: bool = False) -> pb.ClaimRequest:
    check_claim_key(key)
    if ttl is None:
        raise errors.InvalidArgument(
            "ttl is missing; give how long the work may take, in seconds (or a timedelta)"
        )
    t = seconds("ttl", ttl, 0.0, MAX_CLAIM_TTL_SECONDS)
    if t <= 0:
        raise errors.InvalidArgument(
            f"ttl = {ttl!r}; give how long the work may take (more than 0 s, at most 7 days)"
        )
    return pb.ClaimRequest(
        key=key,
        ttl_ms=max(1, int(round(t * 1000))),
        accept_lost_history=bool(accept_lost_history),
    )


def claim_result(key: str, resp: pb.ClaimResponse) -> ClaimResult:
    state = _STATES.get(resp.state)
    if state is None:
        raise errors.LlmctlError(
            f"llmctl claim of {key!r} got an answer with no known state ({resp.state}); "
            "is the daemon older than this client?"
        )
    if state == "done":
        return ClaimResult(key, state, bytes(resp.result), None)
    return ClaimResult(key, state, None, from_unix_ms(resp.since_unix_ms))


def result_bytes(key: str, result: Any, what: str = "result") -> bytes:
    """The bytes to store for ``key``; anything else is refused with the fix (the client
    stores no other type, so nobody has to guess how a stored value was encoded)."""
    if isinstance(result, (bytes, bytearray, memoryview)):
        data = bytes(result)
    else:
        hint = (
            " (encode it, e.g. text.encode())"
            if isinstance(result, str)
            else (" (serialise it, e.g. json.dumps(value).encode())")
        )
        raise errors.InvalidArgument(f"{what} for {key!r} must be bytes, not {type(result).__name__}{hint}")
    if len(data) > MAX_RESULT_BYTES:
        raise errors.InvalidArgument(
            f"{what} for {key!r} is {len(data)} bytes, over the {MAX_RESULT_BYTES} bytes a record "
            "holds; store a reference to it (a path, an object name) instead"
        )
    return data


def complete_request(key: str, result: Any) -> pb.CompleteRequest:
    check_claim_key(key)
    return pb.CompleteRequest(key=key, result=result_bytes(key, result))
