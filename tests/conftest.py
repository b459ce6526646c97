"""Test-wide settings."""

import os
from importlib.metadata import entry_points

from hypothesis import settings

# The pytest plugins this suite uses, by entry point name and module. The environment `make`
# builds registers none of them (tools/quiet_pytest_plugins.py: every pytest the suite starts in
# its small projects would load them), so the suite loads them itself; an environment that still
# registers one loads it at start, and loading it twice is an error.
_USED = {
    "xdist": "xdist.plugin",
    "xdist.looponfail": "xdist.looponfail",
    "hypothesispytest": "_hypothesis_pytestplugin",
}
_autoloaded = (
    set()
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    else {e.name for e in entry_points(group="pytest11")}
)
pytest_plugins = [module for name, module in _USED.items() if name not in _autoloaded]

# Properties here are about what is decided, not how fast: a loaded CI machine must not turn a
# slow example into a failure.
settings.register_profile("donegate", deadline=None)
settings.load_profile("donegate")
