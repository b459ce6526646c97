"""Check types: one registry from ``check_type`` to its collector.

The three built-in check types of Completion Claim v0.1 live one module each. A third party adds a
check type through the ``donegate.checks`` entry point group, naming an object (or a class taking
no arguments) with the :class:`~donegate.checks.base.Collector` shape::

    [project.entry-points."donegate.checks"]
    dom_assertion = "mypkg.checks:DomAssertion"

A plugin cannot replace a built-in check type, and one that fails to load is reported when a
configuration names it, never silently skipped into a pass.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib.metadata import entry_points

from donegate.checks.base import AnyCollector, CheckContext, CheckSettings, Observation
from donegate.checks.endpoint_health import ENDPOINT_HEALTH
from donegate.checks.state_readback import STATE_READBACK
from donegate.checks.test_run import TEST_RUN

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "AnyCollector",
    "CheckContext",
    "CheckSettings",
    "Observation",
    "lookup",
    "registry",
]

ENTRY_POINT_GROUP = "donegate.checks"
_log = logging.getLogger(__name__)

BUILTIN: dict[str, AnyCollector] = {
    "test_run": TEST_RUN,
    "endpoint_health": ENDPOINT_HEALTH,
    "state_readback": STATE_READBACK,
}

# check_type -> why its plugin could not be loaded (said when a configuration names it)
_BROKEN: dict[str, str] = {}


@lru_cache(maxsize=1)
def registry() -> dict[str, AnyCollector]:
    """Every known check type: the built-ins, then the plugins that loaded."""
    found = dict(BUILTIN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in found:
            _log.warning("plugin %s cannot replace check type %r", point.value, point.name)
            continue
        collector = _load(point.name, point.value, point.load)
        if collector is not None:
            found[point.name] = collector
    return found


def _load(name: str, where: str, load: object) -> AnyCollector | None:
    try:
        target = load()  # type: ignore[operator]
        collector = target() if isinstance(target, type) else target
    except Exception as exc:  # a broken plugin must not take the built-ins down with it
        _BROKEN[name] = f"plugin {where} failed to load: {type(exc).__name__}: {exc}"
        return None
    if not (hasattr(collector, "settings_model") and callable(getattr(collector, "collect", None))):
        _BROKEN[name] = f"plugin {where} has no settings_model and collect()"
        return None
    return collector  # type: ignore[no-any-return]


def lookup(check_type: str) -> AnyCollector:
    """The collector of ``check_type``; ``KeyError`` with a message saying what is known."""
    found = registry().get(check_type)
    if found is not None:
        return found
    if check_type in _BROKEN:
        raise KeyError(_BROKEN[check_type])
    known = ", ".join(sorted(registry()))
    raise KeyError(f"unknown check type {check_type!r}; known: {known}")
