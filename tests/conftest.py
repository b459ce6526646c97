"""Test-wide settings."""

from hypothesis import settings

# Properties here are about what is decided, not how fast: a loaded CI machine must not turn a
# slow example into a failure.
settings.register_profile("donegate", deadline=None)
settings.load_profile("donegate")
