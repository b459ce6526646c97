"""What the scan reports: one :class:`Finding` per new construct, named by a construct id.

Construct ids are stable strings; a team names them in ``[scan] allow`` and the stop's feedback
shows them to the agent.
"""

from __future__ import annotations

from donegate.record import Record

# Each construct id, and why it matters: the second half of every finding's sentence.
CONSTRUCTS: dict[str, str] = {
    "runner-internals": "reaches into the test runner's internals, which can rewrite its reports",
    "test-detection": "detects that it runs under test, so it can behave differently there",
    "patch-sys-modules": "replaces imported modules, which can swap the code under test or the "
    "runner",
    "patch-builtins": "rebinds a builtin, which changes every module's behaviour at once",
    "trace-hook": "installs a trace or profile hook, which sees and can steer every call",
    "frame-inspection": "reads call frames, so it can find and alter its caller (the runner)",
    "hard-exit": "can end the process or run code at exit, around the runner's own reporting",
    "always-equal": "defines a comparison or hash that does not compare the values it is given, "
    "so any assertion of equality passes",
    "dynamic-code": "runs text or a file's content as code, which no scan of the writes can read",
    "reads-tests": "reads the test files, so it can copy their expected values",
    "fitted-to-test": "special-cases a test input: the code matches the test's value instead "
    "of solving the problem",
    "test-table": "looks its answer up in a table of the test's inputs and expected outputs "
    "instead of computing it",
    "call-counter": "keeps state across calls and answers by it, so it returns what each test "
    "expects in the order the tests call it",
    "unparsed": "could not be parsed, so it could not be scanned",
}


class Finding(Record):
    """One construct found in a written file.

    ``blocking`` says whether it makes the stop unverified (settings decide); ``allowed`` is
    the reason of the ``[scan] allow`` rule that let it through, if one did.
    """

    path: str
    line: int
    construct: str
    message: str
    blocking: bool
    allowed: str | None = None

    def to_json(self) -> dict[str, object]:
        """The finding as a JSON object."""
        return {
            "path": self.path,
            "line": self.line,
            "construct": self.construct,
            "message": self.message,
            "blocking": self.blocking,
            "allowed": self.allowed,
        }

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.construct}] {self.message}"


class Occurrence(Record):
    """A construct in one version of a file, before it is known to be new.

    ``detail`` is what the construct is (``sys._getframe``, an unparsed comparison), the same
    wherever it moves; ``scope`` is the enclosing class and function (``Cls.method``).
    """

    construct: str
    line: int
    scope: str
    detail: str

    def sentence(self) -> str:
        """What a finding says about this occurrence."""
        return f"{self.detail}: {CONSTRUCTS[self.construct]}"
