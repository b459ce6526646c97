"""Keeping secrets out of evidence, output, logs and error messages.

Secrets reach donegate through the environment (``${DATABASE_URL}`` in the configuration). Every
text that leaves a collector or the configuration loader passes through a :class:`Redactor`, which
masks the values that were expanded from the environment and the password of any URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import JsonValue

MASK = "***"
# Shorter values (a port, a flag) are too likely to occur by chance; masking them would mangle
# unrelated text without protecting anything worth protecting.
MIN_SECRET_LENGTH = 4

# scheme://user:password@host -- the password runs to the last "@" of the authority.
_URL_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@?#]*):(?P<password>[^\s/?#]*)@"
)


@dataclass(frozen=True, slots=True)
class Redactor:
    """Masks known secret values and URL passwords in text and JSON values."""

    secrets: frozenset[str] = frozenset()

    def with_secrets(self, values: Iterable[str]) -> Redactor:
        """This redactor, also masking ``values`` (short ones are ignored)."""
        kept = {value for value in values if len(value) >= MIN_SECRET_LENGTH}
        return Redactor(self.secrets | kept)

    def text(self, value: str) -> str:
        """``value`` with every secret and every URL password replaced by ``***``."""
        # Longest first, so that a secret containing another is masked whole.
        for secret in sorted(self.secrets, key=len, reverse=True):
            value = value.replace(secret, MASK)
        return _URL_PASSWORD.sub(rf"\g<head>:{MASK}@", value)

    def json(self, value: JsonValue) -> JsonValue:
        """A JSON value with every string (keys included) passed through :meth:`text`."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key): self.json(item) for key, item in value.items()}
        return value


NO_SECRETS = Redactor()
