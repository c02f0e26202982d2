from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RefusalReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REFUSAL_REASON_UNSPECIFIED: _ClassVar[RefusalReason]
    REFUSAL_REASON_CAPACITY: _ClassVar[RefusalReason]
    REFUSAL_REASON_CONCURRENCY: _ClassVar[RefusalReason]
    REFUSAL_REASON_COOLDOWN: _ClassVar[RefusalReason]
    REFUSAL_REASON_BREAKER_OPEN: _ClassVar[RefusalReason]
    REFUSAL_REASON_RUN_BUDGET: _ClassVar[RefusalReason]
    REFUSAL_REASON_ROUTE_GROUP: _ClassVar[RefusalReason]
    REFUSAL_REASON_STOPPING: _ClassVar[RefusalReason]
    REFUSAL_REASON_TOO_LARGE: _ClassVar[RefusalReason]
    REFUSAL_REASON_DAILY_QUOTA: _ClassVar[RefusalReason]
    REFUSAL_REASON_PLAN_WINDOW: _ClassVar[RefusalReason]
    REFUSAL_REASON_CANCELLED: _ClassVar[RefusalReason]

class Advice(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ADVICE_UNSPECIFIED: _ClassVar[Advice]
    DONE: _ClassVar[Advice]
    RETRY: _ClassVar[Advice]
    GIVE_UP: _ClassVar[Advice]
    FALLBACK: _ClassVar[Advice]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_COOLDOWN: _ClassVar[EventKind]
    EVENT_KIND_GIVE_UP: _ClassVar[EventKind]
    EVENT_KIND_FALLBACK: _ClassVar[EventKind]
    EVENT_KIND_BREAKER: _ClassVar[EventKind]
    EVENT_KIND_EXPIRED: _ClassVar[EventKind]
    EVENT_KIND_RELEASED: _ClassVar[EventKind]
    EVENT_KIND_CALIBRATED: _ClassVar[EventKind]
    EVENT_KIND_RESET: _ClassVar[EventKind]
    EVENT_KIND_RECONFIGURED: _ClassVar[EventKind]
    EVENT_KIND_PLAN_WINDOW: _ClassVar[EventKind]

class Dimension(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIMENSION_UNSPECIFIED: _ClassVar[Dimension]
    DIMENSION_REQUESTS: _ClassVar[Dimension]
    DIMENSION_TOKENS: _ClassVar[Dimension]
    DIMENSION_INPUT_TOKENS: _ClassVar[Dimension]
    DIMENSION_OUTPUT_TOKENS: _ClassVar[Dimension]

class Period(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PERIOD_UNSPECIFIED: _ClassVar[Period]
    PERIOD_MINUTE: _ClassVar[Period]
    PERIOD_DAY: _ClassVar[Period]

class LimitSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIMIT_SOURCE_UNSPECIFIED: _ClassVar[LimitSource]
    LIMIT_SOURCE_CONFIG: _ClassVar[LimitSource]
    LIMIT_SOURCE_HEADERS: _ClassVar[LimitSource]
    LIMIT_SOURCE_AIMD: _ClassVar[LimitSource]

class BreakerState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BREAKER_STATE_UNSPECIFIED: _ClassVar[BreakerState]
    BREAKER_STATE_CLOSED: _ClassVar[BreakerState]
    BREAKER_STATE_OPEN: _ClassVar[BreakerState]
    BREAKER_STATE_HALF_OPEN: _ClassVar[BreakerState]

class Provider(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROVIDER_UNSPECIFIED: _ClassVar[Provider]
    PROVIDER_OPENAI: _ClassVar[Provider]
    PROVIDER_AZURE: _ClassVar[Provider]
    PROVIDER_ANTHROPIC: _ClassVar[Provider]
    PROVIDER_GEMINI: _ClassVar[Provider]
    PROVIDER_GENERIC: _ClassVar[Provider]

class OutputCounting(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTPUT_COUNTING_UNSPECIFIED: _ClassVar[OutputCounting]
    OUTPUT_COUNTING_ACTUAL: _ClassVar[OutputCounting]
    OUTPUT_COUNTING_RESERVED: _ClassVar[OutputCounting]

class AccountingSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACCOUNTING_SOURCE_UNSPECIFIED: _ClassVar[AccountingSource]
    ACCOUNTING_SOURCE_CONFIG: _ClassVar[AccountingSource]
    ACCOUNTING_SOURCE_PROVIDER: _ClassVar[AccountingSource]
    ACCOUNTING_SOURCE_USAGE: _ClassVar[AccountingSource]
    ACCOUNTING_SOURCE_HEADERS: _ClassVar[AccountingSource]
    ACCOUNTING_SOURCE_DEFAULT: _ClassVar[AccountingSource]
REFUSAL_REASON_UNSPECIFIED: RefusalReason
REFUSAL_REASON_CAPACITY: RefusalReason
REFUSAL_REASON_CONCURRENCY: RefusalReason
REFUSAL_REASON_COOLDOWN: RefusalReason
REFUSAL_REASON_BREAKER_OPEN: RefusalReason
REFUSAL_REASON_RUN_BUDGET: RefusalReason
REFUSAL_REASON_ROUTE_GROUP: RefusalReason
REFUSAL_REASON_STOPPING: RefusalReason
REFUSAL_REASON_TOO_LARGE: RefusalReason
REFUSAL_REASON_DAILY_QUOTA: RefusalReason
REFUSAL_REASON_PLAN_WINDOW: RefusalReason
REFUSAL_REASON_CANCELLED: RefusalReason
ADVICE_UNSPECIFIED: Advice
DONE: Advice
RETRY: Advice
GIVE_UP: Advice
FALLBACK: Advice
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_COOLDOWN: EventKind
EVENT_KIND_GIVE_UP: EventKind
EVENT_KIND_FALLBACK: EventKind
EVENT_KIND_BREAKER: EventKind
EVENT_KIND_EXPIRED: EventKind
EVENT_KIND_RELEASED: EventKind
EVENT_KIND_CALIBRATED: EventKind
EVENT_KIND_RESET: EventKind
EVENT_KIND_RECONFIGURED: EventKind
EVENT_KIND_PLAN_WINDOW: EventKind
DIMENSION_UNSPECIFIED: Dimension
DIMENSION_REQUESTS: Dimension
DIMENSION_TOKENS: Dimension
DIMENSION_INPUT_TOKENS: Dimension
DIMENSION_OUTPUT_TOKENS: Dimension
PERIOD_UNSPECIFIED: Period
PERIOD_MINUTE: Period
PERIOD_DAY: Period
LIMIT_SOURCE_UNSPECIFIED: LimitSource
LIMIT_SOURCE_CONFIG: LimitSource
LIMIT_SOURCE_HEADERS: LimitSource
LIMIT_SOURCE_AIMD: LimitSource
BREAKER_STATE_UNSPECIFIED: BreakerState
BREAKER_STATE_CLOSED: BreakerState
BREAKER_STATE_OPEN: BreakerState
BREAKER_STATE_HALF_OPEN: BreakerState
PROVIDER_UNSPECIFIED: Provider
PROVIDER_OPENAI: Provider
PROVIDER_AZURE: Provider
PROVIDER_ANTHROPIC: Provider
PROVIDER_GEMINI: Provider
PROVIDER_GENERIC: Provider
OUTPUT_COUNTING_UNSPECIFIED: OutputCounting
OUTPUT_COUNTING_ACTUAL: OutputCounting
OUTPUT_COUNTING_RESERVED: OutputCounting
ACCOUNTING_SOURCE_UNSPECIFIED: AccountingSource
ACCOUNTING_SOURCE_CONFIG: AccountingSource
ACCOUNTING_SOURCE_PROVIDER: AccountingSource
ACCOUNTING_SOURCE_USAGE: AccountingSource
ACCOUNTING_SOURCE_HEADERS: AccountingSource
ACCOUNTING_SOURCE_DEFAULT: AccountingSource

class WithdrawRequest(_message.Message):
    __slots__ = ("acquire_id", "lease_id")
    ACQUIRE_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    acquire_id: str
    lease_id: str
    def __init__(self, acquire_id: _Optional[str] = ..., lease_id: _Optional[str] = ...) -> None: ...

class WithdrawResponse(_message.Message):
    __slots__ = ("withdrawn",)
    WITHDRAWN_FIELD_NUMBER: _ClassVar[int]
    withdrawn: bool
    def __init__(self, withdrawn: bool = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("learned_limits", "debt", "cooldown_ended", "breaker_closed")
    LEARNED_LIMITS_FIELD_NUMBER: _ClassVar[int]
    DEBT_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_ENDED_FIELD_NUMBER: _ClassVar[int]
    BREAKER_CLOSED_FIELD_NUMBER: _ClassVar[int]
    learned_limits: int
    debt: float
    cooldown_ended: bool
    breaker_closed: bool
    def __init__(self, learned_limits: _Optional[int] = ..., debt: _Optional[float] = ..., cooldown_ended: bool = ..., breaker_closed: bool = ...) -> None: ...

class AcquireRequest(_message.Message):
    __slots__ = ("key", "requests", "input_tokens", "output_tokens", "priority", "max_wait_ms", "client_id", "run_id", "route_group", "profile", "output_tokens_declared", "acquire_id")
    KEY_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    MAX_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    ROUTE_GROUP_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_DECLARED_FIELD_NUMBER: _ClassVar[int]
    ACQUIRE_ID_FIELD_NUMBER: _ClassVar[int]
    key: str
    requests: int
    input_tokens: int
    output_tokens: int
    priority: int
    max_wait_ms: int
    client_id: str
    run_id: str
    route_group: str
    profile: str
    output_tokens_declared: bool
    acquire_id: str
    def __init__(self, key: _Optional[str] = ..., requests: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., priority: _Optional[int] = ..., max_wait_ms: _Optional[int] = ..., client_id: _Optional[str] = ..., run_id: _Optional[str] = ..., route_group: _Optional[str] = ..., profile: _Optional[str] = ..., output_tokens_declared: bool = ..., acquire_id: _Optional[str] = ...) -> None: ...

class AcquireResponse(_message.Message):
    __slots__ = ("granted", "lease_id", "key", "waited_ms", "not_before_unix_ms", "reason", "expires_unix_ms", "reason_code")
    GRANTED_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    granted: bool
    lease_id: str
    key: str
    waited_ms: int
    not_before_unix_ms: int
    reason: str
    expires_unix_ms: int
    reason_code: RefusalReason
    def __init__(self, granted: bool = ..., lease_id: _Optional[str] = ..., key: _Optional[str] = ..., waited_ms: _Optional[int] = ..., not_before_unix_ms: _Optional[int] = ..., reason: _Optional[str] = ..., expires_unix_ms: _Optional[int] = ..., reason_code: _Optional[_Union[RefusalReason, str]] = ...) -> None: ...

class ReportRequest(_message.Message):
    __slots__ = ("lease_id", "status_code", "headers", "input_tokens", "cached_input_tokens", "output_tokens", "error_type", "error_message", "stream_started", "attempt", "usage_known", "first_attempt_unix_ms", "answered_unix_ms")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STREAM_STARTED_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    USAGE_KNOWN_FIELD_NUMBER: _ClassVar[int]
    FIRST_ATTEMPT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    lease_id: str
    status_code: int
    headers: _containers.ScalarMap[str, str]
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    error_type: str
    error_message: str
    stream_started: bool
    attempt: int
    usage_known: bool
    first_attempt_unix_ms: int
    answered_unix_ms: int
    def __init__(self, lease_id: _Optional[str] = ..., status_code: _Optional[int] = ..., headers: _Optional[_Mapping[str, str]] = ..., input_tokens: _Optional[int] = ..., cached_input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., error_type: _Optional[str] = ..., error_message: _Optional[str] = ..., stream_started: bool = ..., attempt: _Optional[int] = ..., usage_known: bool = ..., first_attempt_unix_ms: _Optional[int] = ..., answered_unix_ms: _Optional[int] = ...) -> None: ...

class ReportResponse(_message.Message):
    __slots__ = ("advice", "retry_after_ms", "fallback_key", "reason")
    ADVICE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_KEY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    advice: Advice
    retry_after_ms: int
    fallback_key: str
    reason: str
    def __init__(self, advice: _Optional[_Union[Advice, str]] = ..., retry_after_ms: _Optional[int] = ..., fallback_key: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CooldownRequest(_message.Message):
    __slots__ = ("key", "duration_ms", "reason")
    KEY_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    key: str
    duration_ms: int
    reason: str
    def __init__(self, key: _Optional[str] = ..., duration_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class CooldownResponse(_message.Message):
    __slots__ = ("until_unix_ms",)
    UNTIL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    until_unix_ms: int
    def __init__(self, until_unix_ms: _Optional[int] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ("key_prefix",)
    KEY_PREFIX_FIELD_NUMBER: _ClassVar[int]
    key_prefix: str
    def __init__(self, key_prefix: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("interval_ms", "key_prefix")
    INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    KEY_PREFIX_FIELD_NUMBER: _ClassVar[int]
    interval_ms: int
    key_prefix: str
    def __init__(self, interval_ms: _Optional[int] = ..., key_prefix: _Optional[str] = ...) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ("keys", "now_unix_ms", "started_unix_ms", "sessions", "socket", "events", "duplicates_suppressed", "runs", "claims_lost_at_unix_ms", "store_failing_since_unix_ms", "store_error", "clients", "fleet")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    NOW_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STARTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SOCKET_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATES_SUPPRESSED_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_LOST_AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STORE_FAILING_SINCE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STORE_ERROR_FIELD_NUMBER: _ClassVar[int]
    CLIENTS_FIELD_NUMBER: _ClassVar[int]
    FLEET_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[KeyStatus]
    now_unix_ms: int
    started_unix_ms: int
    sessions: int
    socket: str
    events: _containers.RepeatedCompositeFieldContainer[Event]
    duplicates_suppressed: int
    runs: _containers.RepeatedCompositeFieldContainer[RunStatus]
    claims_lost_at_unix_ms: int
    store_failing_since_unix_ms: int
    store_error: str
    clients: _containers.RepeatedCompositeFieldContainer[ClientStatus]
    fleet: FleetStatus
    def __init__(self, keys: _Optional[_Iterable[_Union[KeyStatus, _Mapping]]] = ..., now_unix_ms: _Optional[int] = ..., started_unix_ms: _Optional[int] = ..., sessions: _Optional[int] = ..., socket: _Optional[str] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., duplicates_suppressed: _Optional[int] = ..., runs: _Optional[_Iterable[_Union[RunStatus, _Mapping]]] = ..., claims_lost_at_unix_ms: _Optional[int] = ..., store_failing_since_unix_ms: _Optional[int] = ..., store_error: _Optional[str] = ..., clients: _Optional[_Iterable[_Union[ClientStatus, _Mapping]]] = ..., fleet: _Optional[_Union[FleetStatus, _Mapping]] = ...) -> None: ...

class FleetStatus(_message.Message):
    __slots__ = ("host", "redis", "connected", "hosts", "last_error", "slice_ms", "redis_commands_total", "redis_cluster")
    HOST_FIELD_NUMBER: _ClassVar[int]
    REDIS_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    SLICE_MS_FIELD_NUMBER: _ClassVar[int]
    REDIS_COMMANDS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REDIS_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    host: str
    redis: str
    connected: bool
    hosts: int
    last_error: str
    slice_ms: int
    redis_commands_total: int
    redis_cluster: bool
    def __init__(self, host: _Optional[str] = ..., redis: _Optional[str] = ..., connected: bool = ..., hosts: _Optional[int] = ..., last_error: _Optional[str] = ..., slice_ms: _Optional[int] = ..., redis_commands_total: _Optional[int] = ..., redis_cluster: bool = ...) -> None: ...

class RunStatus(_message.Message):
    __slots__ = ("run_id", "calls", "retries", "started_unix_ms", "wall_ms", "max_calls", "max_retries", "max_wall_time_ms", "exhausted", "requests_per_second", "tokens_per_minute", "in_flight", "queue_depth", "rate_limited_total")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    RETRIES_FIELD_NUMBER: _ClassVar[int]
    STARTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    WALL_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_CALLS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_WALL_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    EXHAUSTED_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    calls: int
    retries: int
    started_unix_ms: int
    wall_ms: int
    max_calls: int
    max_retries: int
    max_wall_time_ms: int
    exhausted: str
    requests_per_second: float
    tokens_per_minute: float
    in_flight: int
    queue_depth: int
    rate_limited_total: int
    def __init__(self, run_id: _Optional[str] = ..., calls: _Optional[int] = ..., retries: _Optional[int] = ..., started_unix_ms: _Optional[int] = ..., wall_ms: _Optional[int] = ..., max_calls: _Optional[int] = ..., max_retries: _Optional[int] = ..., max_wall_time_ms: _Optional[int] = ..., exhausted: _Optional[str] = ..., requests_per_second: _Optional[float] = ..., tokens_per_minute: _Optional[float] = ..., in_flight: _Optional[int] = ..., queue_depth: _Optional[int] = ..., rate_limited_total: _Optional[int] = ...) -> None: ...

class ClientStatus(_message.Message):
    __slots__ = ("client_id", "pid", "process_name", "uid", "user", "requests_per_second", "tokens_per_minute", "in_flight", "queue_depth", "rate_limited_total", "granted_total")
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    PROCESS_NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GRANTED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    client_id: str
    pid: int
    process_name: str
    uid: int
    user: str
    requests_per_second: float
    tokens_per_minute: float
    in_flight: int
    queue_depth: int
    rate_limited_total: int
    granted_total: int
    def __init__(self, client_id: _Optional[str] = ..., pid: _Optional[int] = ..., process_name: _Optional[str] = ..., uid: _Optional[int] = ..., user: _Optional[str] = ..., requests_per_second: _Optional[float] = ..., tokens_per_minute: _Optional[float] = ..., in_flight: _Optional[int] = ..., queue_depth: _Optional[int] = ..., rate_limited_total: _Optional[int] = ..., granted_total: _Optional[int] = ...) -> None: ...

class SetRunBudgetRequest(_message.Message):
    __slots__ = ("run_id", "max_calls", "max_retries", "max_wall_time_ms")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_CALLS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_WALL_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    max_calls: int
    max_retries: int
    max_wall_time_ms: int
    def __init__(self, run_id: _Optional[str] = ..., max_calls: _Optional[int] = ..., max_retries: _Optional[int] = ..., max_wall_time_ms: _Optional[int] = ...) -> None: ...

class SetRunBudgetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Event(_message.Message):
    __slots__ = ("unix_ms", "key", "kind", "message", "kind_code")
    UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    KIND_CODE_FIELD_NUMBER: _ClassVar[int]
    unix_ms: int
    key: str
    kind: str
    message: str
    kind_code: EventKind
    def __init__(self, unix_ms: _Optional[int] = ..., key: _Optional[str] = ..., kind: _Optional[str] = ..., message: _Optional[str] = ..., kind_code: _Optional[_Union[EventKind, str]] = ...) -> None: ...

class Bucket(_message.Message):
    __slots__ = ("dimension", "period", "limit", "capacity", "level", "source", "capacity_source", "configured_limit", "configured_capacity", "learned_limit", "learned_capacity", "learned_source", "dimension_code", "period_code", "source_code", "capacity_source_code", "learned_source_code", "headers_limit", "beneath_headers")
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURED_LIMIT_FIELD_NUMBER: _ClassVar[int]
    CONFIGURED_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LEARNED_LIMIT_FIELD_NUMBER: _ClassVar[int]
    LEARNED_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LEARNED_SOURCE_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_CODE_FIELD_NUMBER: _ClassVar[int]
    PERIOD_CODE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CODE_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_SOURCE_CODE_FIELD_NUMBER: _ClassVar[int]
    LEARNED_SOURCE_CODE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    BENEATH_HEADERS_FIELD_NUMBER: _ClassVar[int]
    dimension: str
    period: str
    limit: float
    capacity: float
    level: float
    source: str
    capacity_source: str
    configured_limit: float
    configured_capacity: float
    learned_limit: float
    learned_capacity: float
    learned_source: str
    dimension_code: Dimension
    period_code: Period
    source_code: LimitSource
    capacity_source_code: LimitSource
    learned_source_code: LimitSource
    headers_limit: float
    beneath_headers: bool
    def __init__(self, dimension: _Optional[str] = ..., period: _Optional[str] = ..., limit: _Optional[float] = ..., capacity: _Optional[float] = ..., level: _Optional[float] = ..., source: _Optional[str] = ..., capacity_source: _Optional[str] = ..., configured_limit: _Optional[float] = ..., configured_capacity: _Optional[float] = ..., learned_limit: _Optional[float] = ..., learned_capacity: _Optional[float] = ..., learned_source: _Optional[str] = ..., dimension_code: _Optional[_Union[Dimension, str]] = ..., period_code: _Optional[_Union[Period, str]] = ..., source_code: _Optional[_Union[LimitSource, str]] = ..., capacity_source_code: _Optional[_Union[LimitSource, str]] = ..., learned_source_code: _Optional[_Union[LimitSource, str]] = ..., headers_limit: _Optional[float] = ..., beneath_headers: bool = ...) -> None: ...

class KeyStatus(_message.Message):
    __slots__ = ("key", "buckets", "in_flight", "max_concurrency", "queue_depth", "queue_wait_p50_ms", "queue_wait_p95_ms", "rate_limited_total", "rate_limited_per_minute", "tokens_reserved", "tokens_used", "cooldown_remaining_ms", "fallbacks_total", "requests_total", "granted_total", "cooldown_reason", "tokens_outstanding", "ancestors", "last_headers", "requests_per_second", "rejected_total", "fallbacks_per_minute", "retries_total", "give_ups_total", "breaker", "breaker_open_remaining_ms", "provider", "output_counted_as", "output_counted_as_source", "headers_ignored_total", "fleet_shared", "fleet_share", "fleet_slots", "output_tokens_estimate", "undeclared_tokens_reserved", "undeclared_tokens_used", "concurrency_source", "learned_concurrency", "daily_quota_until_unix_ms", "daily_quota", "fixed_window_ms", "breaker_code", "provider_code", "output_counted_as_code", "output_counted_as_source_code", "concurrency_source_code", "settled_at_estimate_total", "plan_windows", "fleet_line", "cancelled_total", "settled_total", "withdrawn_total", "expired_total")
    class LastHeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KEY_FIELD_NUMBER: _ClassVar[int]
    BUCKETS_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    QUEUE_WAIT_P50_MS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_WAIT_P95_MS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITED_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_RESERVED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GRANTED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_REASON_FIELD_NUMBER: _ClassVar[int]
    TOKENS_OUTSTANDING_FIELD_NUMBER: _ClassVar[int]
    ANCESTORS_FIELD_NUMBER: _ClassVar[int]
    LAST_HEADERS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    REJECTED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    RETRIES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GIVE_UPS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    BREAKER_OPEN_REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_COUNTED_AS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_COUNTED_AS_SOURCE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_IGNORED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FLEET_SHARED_FIELD_NUMBER: _ClassVar[int]
    FLEET_SHARE_FIELD_NUMBER: _ClassVar[int]
    FLEET_SLOTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    UNDECLARED_TOKENS_RESERVED_FIELD_NUMBER: _ClassVar[int]
    UNDECLARED_TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_SOURCE_FIELD_NUMBER: _ClassVar[int]
    LEARNED_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    DAILY_QUOTA_UNTIL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    DAILY_QUOTA_FIELD_NUMBER: _ClassVar[int]
    FIXED_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    BREAKER_CODE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CODE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_COUNTED_AS_CODE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_COUNTED_AS_SOURCE_CODE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_SOURCE_CODE_FIELD_NUMBER: _ClassVar[int]
    SETTLED_AT_ESTIMATE_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PLAN_WINDOWS_FIELD_NUMBER: _ClassVar[int]
    FLEET_LINE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SETTLED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_TOTAL_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    key: str
    buckets: _containers.RepeatedCompositeFieldContainer[Bucket]
    in_flight: int
    max_concurrency: int
    queue_depth: int
    queue_wait_p50_ms: int
    queue_wait_p95_ms: int
    rate_limited_total: int
    rate_limited_per_minute: float
    tokens_reserved: int
    tokens_used: int
    cooldown_remaining_ms: int
    fallbacks_total: int
    requests_total: int
    granted_total: int
    cooldown_reason: str
    tokens_outstanding: int
    ancestors: _containers.RepeatedScalarFieldContainer[str]
    last_headers: _containers.ScalarMap[str, str]
    requests_per_second: float
    rejected_total: int
    fallbacks_per_minute: float
    retries_total: int
    give_ups_total: int
    breaker: str
    breaker_open_remaining_ms: int
    provider: str
    output_counted_as: str
    output_counted_as_source: str
    headers_ignored_total: int
    fleet_shared: bool
    fleet_share: float
    fleet_slots: int
    output_tokens_estimate: int
    undeclared_tokens_reserved: int
    undeclared_tokens_used: int
    concurrency_source: str
    learned_concurrency: int
    daily_quota_until_unix_ms: int
    daily_quota: str
    fixed_window_ms: int
    breaker_code: BreakerState
    provider_code: Provider
    output_counted_as_code: OutputCounting
    output_counted_as_source_code: AccountingSource
    concurrency_source_code: LimitSource
    settled_at_estimate_total: int
    plan_windows: _containers.RepeatedCompositeFieldContainer[PlanWindow]
    fleet_line: bool
    cancelled_total: int
    settled_total: int
    withdrawn_total: int
    expired_total: int
    def __init__(self, key: _Optional[str] = ..., buckets: _Optional[_Iterable[_Union[Bucket, _Mapping]]] = ..., in_flight: _Optional[int] = ..., max_concurrency: _Optional[int] = ..., queue_depth: _Optional[int] = ..., queue_wait_p50_ms: _Optional[int] = ..., queue_wait_p95_ms: _Optional[int] = ..., rate_limited_total: _Optional[int] = ..., rate_limited_per_minute: _Optional[float] = ..., tokens_reserved: _Optional[int] = ..., tokens_used: _Optional[int] = ..., cooldown_remaining_ms: _Optional[int] = ..., fallbacks_total: _Optional[int] = ..., requests_total: _Optional[int] = ..., granted_total: _Optional[int] = ..., cooldown_reason: _Optional[str] = ..., tokens_outstanding: _Optional[int] = ..., ancestors: _Optional[_Iterable[str]] = ..., last_headers: _Optional[_Mapping[str, str]] = ..., requests_per_second: _Optional[float] = ..., rejected_total: _Optional[int] = ..., fallbacks_per_minute: _Optional[float] = ..., retries_total: _Optional[int] = ..., give_ups_total: _Optional[int] = ..., breaker: _Optional[str] = ..., breaker_open_remaining_ms: _Optional[int] = ..., provider: _Optional[str] = ..., output_counted_as: _Optional[str] = ..., output_counted_as_source: _Optional[str] = ..., headers_ignored_total: _Optional[int] = ..., fleet_shared: bool = ..., fleet_share: _Optional[float] = ..., fleet_slots: _Optional[int] = ..., output_tokens_estimate: _Optional[int] = ..., undeclared_tokens_reserved: _Optional[int] = ..., undeclared_tokens_used: _Optional[int] = ..., concurrency_source: _Optional[str] = ..., learned_concurrency: _Optional[int] = ..., daily_quota_until_unix_ms: _Optional[int] = ..., daily_quota: _Optional[str] = ..., fixed_window_ms: _Optional[int] = ..., breaker_code: _Optional[_Union[BreakerState, str]] = ..., provider_code: _Optional[_Union[Provider, str]] = ..., output_counted_as_code: _Optional[_Union[OutputCounting, str]] = ..., output_counted_as_source_code: _Optional[_Union[AccountingSource, str]] = ..., concurrency_source_code: _Optional[_Union[LimitSource, str]] = ..., settled_at_estimate_total: _Optional[int] = ..., plan_windows: _Optional[_Iterable[_Union[PlanWindow, _Mapping]]] = ..., fleet_line: bool = ..., cancelled_total: _Optional[int] = ..., settled_total: _Optional[int] = ..., withdrawn_total: _Optional[int] = ..., expired_total: _Optional[int] = ...) -> None: ...

class PlanWindow(_message.Message):
    __slots__ = ("name", "label", "used", "resets_at_unix_ms", "window_minutes", "status", "closed", "binding")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    RESETS_AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    WINDOW_MINUTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    BINDING_FIELD_NUMBER: _ClassVar[int]
    name: str
    label: str
    used: float
    resets_at_unix_ms: int
    window_minutes: int
    status: str
    closed: bool
    binding: bool
    def __init__(self, name: _Optional[str] = ..., label: _Optional[str] = ..., used: _Optional[float] = ..., resets_at_unix_ms: _Optional[int] = ..., window_minutes: _Optional[int] = ..., status: _Optional[str] = ..., closed: bool = ..., binding: bool = ...) -> None: ...

class ClaimRequest(_message.Message):
    __slots__ = ("key", "ttl_ms", "accept_lost_history")
    KEY_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_LOST_HISTORY_FIELD_NUMBER: _ClassVar[int]
    key: str
    ttl_ms: int
    accept_lost_history: bool
    def __init__(self, key: _Optional[str] = ..., ttl_ms: _Optional[int] = ..., accept_lost_history: bool = ...) -> None: ...

class ClaimResponse(_message.Message):
    __slots__ = ("state", "result", "since_unix_ms")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[ClaimResponse.State]
        CLAIMED: _ClassVar[ClaimResponse.State]
        PENDING: _ClassVar[ClaimResponse.State]
        DONE: _ClassVar[ClaimResponse.State]
    STATE_UNSPECIFIED: ClaimResponse.State
    CLAIMED: ClaimResponse.State
    PENDING: ClaimResponse.State
    DONE: ClaimResponse.State
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SINCE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    state: ClaimResponse.State
    result: bytes
    since_unix_ms: int
    def __init__(self, state: _Optional[_Union[ClaimResponse.State, str]] = ..., result: _Optional[bytes] = ..., since_unix_ms: _Optional[int] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ("key", "result")
    KEY_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    key: str
    result: bytes
    def __init__(self, key: _Optional[str] = ..., result: _Optional[bytes] = ...) -> None: ...

class CompleteResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ("client_id", "pid")
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    client_id: str
    pid: int
    def __init__(self, client_id: _Optional[str] = ..., pid: _Optional[int] = ...) -> None: ...

class SessionEvent(_message.Message):
    __slots__ = ("client_id",)
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    client_id: str
    def __init__(self, client_id: _Optional[str] = ...) -> None: ...

class PingRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PingResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
