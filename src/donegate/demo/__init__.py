"""The demo: agent sessions replayed against a real project through the real hook entry point."""
