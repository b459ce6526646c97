"""An HTTP JSON resource as the system of record: 404 is "not there", other failures are no
observation. The request ends by the check's deadline and reads at most ``max_body_bytes``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from donegate.checks._http import SocketWatch, fetch
from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks._deadline import Deadline
    from donegate.checks.state_readback._settings import StateReadbackSettings


def read(settings: StateReadbackSettings, deadline: Deadline) -> Records:
    """The record(s) at ``settings.path`` in the JSON document ``settings.source`` returns."""
    import httpx

    request = ("GET", settings.source, settings.headers)
    try:
        with SocketWatch(deadline) as watch, httpx.Client() as client:
            response = fetch(client, request, watch, settings.max_body_bytes)
    except httpx.HTTPError as exc:
        raise ReadError(f"{type(exc).__name__}: {exc}") from None
    if response.status in (404, 410):
        return []
    if response.status < 200 or response.status >= 300:
        raise ReadError(f"HTTP {response.status} from the resource")
    if response.truncated:
        raise ReadError(
            f"the resource's body is longer than max_body_bytes ({settings.max_body_bytes}); "
            "a cut document is not read"
        )
    try:
        document = json.loads(response.body)
    except ValueError:
        raise ReadError("the resource did not answer with JSON") from None
    return records_at(document, settings.path)
