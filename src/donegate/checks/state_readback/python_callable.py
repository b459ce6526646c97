"""A Python callable as the system of record, for frameworks that hold their state in process.

``python:pkg.mod:func`` is called with ``params`` as keyword arguments and returns the record (a
mapping), None when there is none, or a list of records.

The call runs in a thread. Python cannot stop a thread, so one that overruns the deadline is left
behind (a daemon thread: it never keeps the process from exiting); the check ends at the deadline
and reports no observation, and whatever the call returns later is dropped.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from donegate.checks._deadline import DeadlineExceeded, call_by
from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks._deadline import Deadline
    from donegate.checks.state_readback._settings import StateReadbackSettings


def read(settings: StateReadbackSettings, deadline: Deadline) -> Records:
    """Call the function; an overrun deadline or an exception is no observation."""
    function = _resolve(settings.source.removeprefix("python:"))
    what = f"the callable {settings.source}"
    try:
        value = call_by(deadline, lambda: function(**settings.params), what)
    except DeadlineExceeded as exc:
        raise DeadlineExceeded(f"{exc} (its thread is left behind)") from None
    except Exception as exc:
        raise ReadError(f"the callable raised {type(exc).__name__}: {exc}") from None
    return records_at(value, None)


def _resolve(spec: str) -> Callable[..., object]:
    module_name, _, attribute = spec.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ReadError(f"cannot load {spec}: {exc}") from None
    if not callable(function):
        raise ReadError(f"{spec} is not callable")
    return function  # type: ignore[no-any-return]
