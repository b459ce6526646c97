"""Feedback on a veto: what the agent is told, keyed by ladder outcome, rendered in one pass.

Placeholders: ``{findings}`` becomes `` Findings: <text>.`` (or nothing), ``{attempts}`` the number
of attempts. Rendering is a single substitution pass, so a placeholder that appears inside the
findings text (compiler output can say anything) stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

DEFAULT_TEMPLATES: Mapping[str, str] = {
    "no_source_write_absent": (
        "No source file has been changed yet, and this task needs a source change. "
        "Make the change before stopping."
    ),
    "no_source_write_cosmetic": (
        "Only cosmetic edits (comments, formatting, wording) were made; they are not evidence "
        "that the task is done. Make the source change the task needs before stopping."
    ),
    "no_source_write_other": (
        "Only tests or docs were written; this task also needs a change to the source itself. "
        "Make it before stopping."
    ),
    "verification_after_write_red": (
        "The verifier fails after your source change.{findings} Fix the failure, then stop."
    ),
    "failed_verification": (
        "The verifier still fails (attempt {attempts}).{findings} Fix the failure, then stop."
    ),
    "repeated_verification_failures": (
        "The verifier has failed {attempts} times in a row without getting closer.{findings} "
        "Step back: re-read the failure and reconsider the approach before editing again."
    ),
    "missing_verification": (
        "Source was changed but the verifier has not run on it. "
        "Run it and make it pass before stopping."
    ),
    "requirements_pending": (
        "Declared requirements are not met yet.{findings} Meet them before stopping."
    ),
    "judge_continue": (
        "The completion judge reviewed the work and sent it back.{findings} Address it, then stop."
    ),
}

FEEDBACK_KEYS = frozenset(DEFAULT_TEMPLATES)

_PLACEHOLDER = re.compile(r"\{(findings|attempts)\}")


def render(template: str, *, findings: str | None, attempts: int) -> str:
    """Fill ``{findings}`` and ``{attempts}`` in one pass; other braces are left as they are."""
    values = {
        "findings": f" Findings: {findings}." if findings else "",
        "attempts": str(attempts),
    }
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def template_for(key: str, overrides: Mapping[str, str]) -> str:
    """The host's template for ``key`` if it gave one, else the default."""
    return overrides.get(key, DEFAULT_TEMPLATES[key])
