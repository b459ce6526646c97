"""``endpoint_health``: a live request against the deployed thing, polled until it holds.

A deploy takes a moment, so the collector polls with backoff until the expectation holds or
``wait_s`` runs out, and records the last response it saw and how many attempts it took. No
response at all is no observation (``absent``), never a pass. TLS is verified, and redirects are
followed only when the configuration says so.

The whole check (connects, headers, bodies, polling) ends by one deadline, ``timeout_s`` after it
starts (``wait_s`` when that is longer), however slowly the server answers; a body is read only up
to ``max_body_bytes``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, JsonValue, model_validator

from donegate.checks._deadline import Deadline, DeadlineExceeded, call_by
from donegate.checks._http import (
    DEFAULT_MAX_BODY_BYTES,
    MAX_BODY_BYTES_LIMIT,
    Fetched,
    SocketWatch,
    fetch,
)
from donegate.checks._jsonpath import MISSING, at_path
from donegate.checks.base import CheckContext, CheckSettings, Observation, PositiveSeconds
from donegate.expectation import compare

if TYPE_CHECKING:
    import httpx

_KEYS = ("status", "body_contains", "json", "headers")
FIRST_DELAY_S = 0.25
MAX_DELAY_S = 2.0
BODY_TAIL_CHARS = 500
WATCH_GRACE_S = 1.0


class EndpointHealthSettings(CheckSettings):
    """An ``endpoint_health`` table; ``expected`` may hold status, body_contains, json, headers."""

    url: Annotated[str, Field(pattern=r"^https?://")]
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] = "GET"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: PositiveSeconds = 10.0
    wait_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    follow_redirects: bool = False
    ca_file: str | None = None
    max_body_bytes: Annotated[int, Field(gt=0, le=MAX_BODY_BYTES_LIMIT)] = DEFAULT_MAX_BODY_BYTES

    @model_validator(mode="after")
    def _expectation_shape(self) -> EndpointHealthSettings:
        why = _bad_expectation(self.expected)
        if why is not None:
            raise ValueError(why)
        return self

    def default_target(self) -> str:
        """The URL (the collector masks its password and any secret in it)."""
        return self.url

    def warnings(self) -> list[str]:
        """A status alone is weak evidence: a health endpoint answers 200 whatever was deployed."""
        if set(self.expected) == {"status"}:
            return [
                "expects only a status code, which is weak evidence about this deploy; "
                "also assert on something that changes with it (a version or build id)"
            ]
        return []


def _bad_expectation(expected: dict[str, JsonValue]) -> str | None:
    if not expected:
        return "expected is required: status, body_contains, json or headers"
    unknown = sorted(set(expected) - set(_KEYS))
    if unknown:
        return f"unknown expected keys {unknown}; allowed: {', '.join(_KEYS)}"
    status = expected.get("status", 200)
    if not isinstance(status, int) or isinstance(status, bool):
        return "expected.status is an integer"
    if not isinstance(expected.get("body_contains", ""), str):
        return "expected.body_contains is a string"
    if not isinstance(expected.get("json", {}), dict):
        return "expected.json maps dotted paths to values"
    headers = expected.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        return "expected.headers maps header names to strings"
    return None


@dataclass(frozen=True, slots=True)
class _Attempt:
    observed: dict[str, JsonValue] | None
    info: dict[str, JsonValue]
    error: str | None = None


class EndpointHealth:
    """The ``endpoint_health`` collector."""

    settings_model = EndpointHealthSettings

    def collect(self, settings: EndpointHealthSettings, context: CheckContext) -> Observation:
        """Poll until the expectation holds or ``wait_s`` runs out; report the last response."""
        deadline = Deadline(max(settings.timeout_s, settings.wait_s))
        try:
            # The watch covers what the sockets' deadline cannot (a name lookup that hangs).
            return call_by(
                deadline, lambda: _run(settings, context, deadline), "the check", WATCH_GRACE_S
            )
        except DeadlineExceeded as exc:
            return Observation.absent(context.redactor.text(f"deadline: {exc}; no response"))


ENDPOINT_HEALTH = EndpointHealth()


def _run(
    settings: EndpointHealthSettings, context: CheckContext, deadline: Deadline
) -> Observation:
    import httpx

    verify: str | bool = str(context.base_dir / settings.ca_file) if settings.ca_file else True
    # No kept-alive connections: each attempt opens its own socket, which the watch can see.
    with (
        SocketWatch(deadline) as watch,
        httpx.Client(
            verify=verify,
            follow_redirects=settings.follow_redirects,
            limits=httpx.Limits(max_keepalive_connections=0),
        ) as client,
    ):
        return _poll(lambda: _attempt(client, settings, watch), settings, deadline, context)


def _poll(
    attempt: Callable[[], _Attempt],
    settings: EndpointHealthSettings,
    deadline: Deadline,
    context: CheckContext,
) -> Observation:
    polling_ends = time.monotonic() + settings.wait_s
    delay, attempts = FIRST_DELAY_S, 0
    seen: _Attempt | None = None
    last: _Attempt
    while True:
        attempts += 1
        last = attempt()
        seen = last if last.observed is not None else seen
        if last.observed is not None and _holds(settings, last.observed):
            break
        remaining = min(polling_ends - time.monotonic(), deadline.remaining())
        if remaining <= 0:
            break
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, MAX_DELAY_S)
    return _result(seen, last, attempts, context)


def _holds(settings: EndpointHealthSettings, observed: dict[str, JsonValue]) -> bool:
    return compare("endpoint_health", settings.expected, observed).outcome == "match"


def _result(
    seen: _Attempt | None, last: _Attempt, attempts: int, context: CheckContext
) -> Observation:
    redact = context.redactor
    if seen is None or seen.observed is None:
        why = f"no response after {attempts} attempt(s): {last.error}"
        return Observation.absent(redact.text(why), attempts=attempts)
    detail: dict[str, JsonValue] = {"attempts": attempts, **seen.info}
    if last.error is not None:
        detail["last_error"] = last.error
    return Observation.seen(seen.observed, **redact.json(detail))  # type: ignore[arg-type]


def _attempt(
    client: httpx.Client, settings: EndpointHealthSettings, watch: SocketWatch
) -> _Attempt:
    import httpx

    request = (settings.method, settings.url, settings.headers)
    try:
        response = fetch(client, request, watch, settings.max_body_bytes)
    except DeadlineExceeded as exc:
        return _Attempt(None, {}, str(exc))
    except httpx.HTTPError as exc:
        return _Attempt(None, {}, f"{type(exc).__name__}: {exc}")
    return _Attempt(_observe(response, settings.expected), _info(response))


def _observe(response: Fetched, expected: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """Only the keys the expectation names, and only those actually observed.

    From a body cut at the cap, text found counts; text not found, or JSON, is not observed.
    """
    observed: dict[str, JsonValue] = {"status": response.status}
    wanted = expected.get("body_contains")
    if isinstance(wanted, str) and (wanted in response.text or not response.truncated):
        observed["body_contains"] = wanted in response.text
    paths = expected.get("json")
    if isinstance(paths, dict) and not response.truncated:
        found = _json_fields(response.text, list(paths))
        if found is not None:
            observed["json"] = found
    names = expected.get("headers")
    if isinstance(names, dict):
        observed["headers"] = {n: response.headers[n] for n in names if n in response.headers}
    return observed


def _json_fields(body: str, paths: list[str]) -> dict[str, JsonValue] | None:
    """The values at ``paths`` in a JSON body; a path not there is left out. None: not JSON."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    found: dict[str, JsonValue] = {}
    for path in paths:
        value = at_path(document, path)
        if value is not MISSING:
            found[path] = value  # type: ignore[assignment]
    return found


def _info(response: Fetched) -> dict[str, JsonValue]:
    info: dict[str, JsonValue] = {
        "status": response.status,
        "body_tail": response.text[-BODY_TAIL_CHARS:],
    }
    if response.truncated:
        info["body_cut"] = (
            f"the body is longer than max_body_bytes ({len(response.body)}): only that much was "
            "read, so text not found in it and JSON fields are not observed"
        )
    if response.redirect_to is not None:
        info["redirect_to"] = response.redirect_to
        info["redirects_followed"] = False
    return info
