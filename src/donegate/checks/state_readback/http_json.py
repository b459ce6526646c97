"""An HTTP JSON resource as the system of record: 404 is "not there", other failures are no
observation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks.state_readback import StateReadbackSettings


def read(settings: StateReadbackSettings) -> Records:
    """The record(s) at ``settings.path`` in the JSON document ``settings.source`` returns."""
    import httpx

    try:
        response = httpx.get(settings.source, headers=settings.headers, timeout=settings.timeout_s)
    except httpx.HTTPError as exc:
        raise ReadError(f"{type(exc).__name__}: {exc}") from None
    if response.status_code in (404, 410):
        return []
    if not response.is_success:
        raise ReadError(f"HTTP {response.status_code} from the resource")
    try:
        document = response.json()
    except ValueError:
        raise ReadError("the resource did not answer with JSON") from None
    return records_at(document, settings.path)
