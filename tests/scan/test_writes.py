"""scan_writes: only what the session added, settings applied, findings as JSON."""

from __future__ import annotations

import json

from donegate.scan import (
    AllowRule,
    Finding,
    ScanSettings,
    WrittenFile,
    scan_writes,
)
from donegate.scan import fitted as rule

FRAME = "import sys\n\ndef caller():\n    return sys._getframe(1)\n"
DEFAULTS = ScanSettings()
LITERALS = rule.test_literals_of(["assert answer(12345) == 42\n"])
FITTED = "def answer(n):\n    if n == 12345:\n        return 42\n    return n\n"


def is_test(path: str) -> bool:
    return path.startswith("tests/")


def scan(*files: WrittenFile, settings: ScanSettings = DEFAULTS) -> list[Finding]:
    return scan_writes(files, LITERALS, settings, is_test)


def test_a_new_file_with_a_construct_is_a_blocking_finding() -> None:
    [finding] = scan(WrittenFile("src/app.py", None, FRAME))
    assert (finding.path, finding.line, finding.construct, finding.blocking) == (
        "src/app.py",
        4,
        "frame-inspection",
        True,
    )
    assert "sys._getframe" in finding.message


def test_a_construct_the_file_already_had_is_not_new() -> None:
    assert scan(WrittenFile("src/app.py", FRAME, FRAME + "\nX = 1\n")) == []


def test_a_moved_construct_is_not_new() -> None:
    moved = (
        "import sys\n\n\ndef other():\n    pass\n\n\ndef caller():\n    return sys._getframe(1)\n"
    )
    assert scan(WrittenFile("src/app.py", FRAME, moved)) == []


def test_a_second_occurrence_is_new_and_named_where_it_was_added() -> None:
    more = FRAME + "\ndef sneaky():\n    return sys._getframe(2)\n"
    assert scan(WrittenFile("src/app.py", FRAME, FRAME)) == []  # control: unchanged, no finding
    [finding] = scan(WrittenFile("src/app.py", FRAME, more))
    assert finding.line == 7


def test_test_files_are_judged_by_the_test_rules() -> None:
    assert scan(WrittenFile("tests/test_app.py", None, FRAME)) == []
    eq = "class A:\n    def __eq__(self, other):\n        return True\n"
    assert [f.construct for f in scan(WrittenFile("tests/test_app.py", None, eq))] == [
        "always-equal"
    ]


def test_deleted_and_non_python_files_are_skipped() -> None:
    assert scan(WrittenFile("src/app.py", FRAME, None)) == []
    assert scan(WrittenFile("src/app.txt", None, FRAME)) == []


def test_a_file_that_does_not_parse_is_reported_and_blocks() -> None:
    [finding] = scan(WrittenFile("src/app.py", FRAME, "x = 1\ndef broken(:\n"))
    assert (finding.construct, finding.line, finding.blocking) == ("unparsed", 2, True)
    assert finding.message.startswith("syntax error")
    [nul] = scan(WrittenFile("src/app.py", FRAME, "x = 1\0\n"))
    assert nul.construct == "unparsed"


def test_an_old_version_that_did_not_parse_counts_as_empty() -> None:
    [finding] = scan(WrittenFile("src/app.py", "def broken(:\n", FRAME))
    assert finding.construct == "frame-inspection"


def test_fitted_to_test_blocks_by_default_and_can_warn_or_be_off() -> None:
    file = WrittenFile("src/answer.py", "def answer(n):\n    return n\n", FITTED)
    [blocking] = scan(file)
    assert (blocking.construct, blocking.blocking) == ("fitted-to-test", True)
    [warning] = scan(file, settings=ScanSettings(fitted_to_test="warn"))
    assert warning.blocking is False
    assert scan(file, settings=ScanSettings(fitted_to_test="off")) == []


def test_fitted_to_test_is_not_looked_for_in_test_files() -> None:
    assert scan(WrittenFile("src/answer.py", None, FITTED)) != []  # control
    assert scan(WrittenFile("tests/helpers.py", None, FITTED)) == []


def test_an_allow_rule_lets_its_construct_through_in_its_paths_only() -> None:
    allow = AllowRule("frame-inspection", "src/debug/**", "our tracer walks frames")
    settings = ScanSettings(allow=(allow,))
    [allowed] = scan(WrittenFile("src/debug/trace.py", None, FRAME), settings=settings)
    assert (allowed.blocking, allowed.allowed) == (False, "our tracer walks frames")
    [elsewhere] = scan(WrittenFile("src/app.py", None, FRAME), settings=settings)
    assert elsewhere.blocking is True
    other = ScanSettings(allow=(AllowRule("hard-exit", "src/**", "why"),))
    [not_this_one] = scan(WrittenFile("src/app.py", None, FRAME), settings=other)
    assert not_this_one.blocking is True


def test_findings_are_json_and_sorted_by_line() -> None:
    source = FITTED + "\nimport os\nos._exit(3)\n"
    findings = scan(WrittenFile("src/answer.py", None, source))
    assert [f.line for f in findings] == sorted(f.line for f in findings)
    payload = json.loads(json.dumps([f.to_json() for f in findings]))
    assert {p["construct"] for p in payload} == {"fitted-to-test", "hard-exit"}
    assert str(findings[0]).startswith("src/answer.py:2: [fitted-to-test]")


def test_a_value_moved_from_another_written_file_is_not_fitted() -> None:
    moved_from = WrittenFile("src/old.py", "LIMIT = 12345\n", "")
    moved_to = WrittenFile("src/answer.py", None, FITTED)
    assert [f.construct for f in scan(moved_to)] == ["fitted-to-test"]  # control
    assert scan(moved_from, moved_to) == []


def test_scan_file_is_one_file_of_scan_writes() -> None:
    from donegate.scan import scan_file

    file = WrittenFile("src/app.py", None, FRAME)
    assert scan_file(file, LITERALS, DEFAULTS, test_file=False) == scan(file)
    assert scan_file(file, LITERALS, DEFAULTS, test_file=True) == []


def test_an_edited_function_that_keeps_its_construct_adds_none() -> None:
    edited = FRAME.replace("return sys._getframe(1)", "frame = sys._getframe(1)\n    return frame")
    assert scan(WrittenFile("src/app.py", None, edited)) != []  # control: new file, a finding
    assert scan(WrittenFile("src/app.py", FRAME, edited)) == []


def test_an_import_alias_in_an_unchanged_statement_still_resolves() -> None:
    old = "import sys as s\n\nX = 1\n"
    new = "import sys as s\n\nX = 1\n\ndef f():\n    return s._getframe()\n"
    assert [f.construct for f in scan(WrittenFile("src/app.py", old, new))] == ["frame-inspection"]


def test_literals_the_session_files_had_are_found_in_their_text() -> None:
    fitted_string = "def norm(z):\n    if z == 'don\\'t':\n        return 1\n"
    literals = rule.test_literals_of(['assert norm("don\'t") == 1\nassert answer(12345) == 42\n'])

    def findings(old: str, new: str) -> list[Finding]:
        return scan_writes([WrittenFile("src/a.py", old, new)], literals, DEFAULTS, is_test)

    assert findings("", FITTED) != []  # control
    assert findings("LIMIT = 12345\n", FITTED) == []
    assert findings("LIMIT = 123456\n", FITTED) != []  # a longer number is another word
    assert findings("", fitted_string) != []  # control
    assert findings('WORD = "don\'t"\n', fitted_string) == []  # a quote: parsed, not searched


def test_a_class_that_grew_a_construct_after_an_old_one_counts_it_once() -> None:
    old = "import sys\n\nclass A:\n    def f(self):\n        return sys._getframe(1)\n"
    grown = old + "\n    def g(self):\n        return sys._getframe(2)\n"
    [finding] = scan(WrittenFile("src/app.py", old, grown))
    assert finding.line == 8
    shrunk_and_moved = "import sys\n\nclass A:\n    pass\n\ndef g():\n    return sys._getframe(2)\n"
    # Moved into another function is added there: a count of constructs let it through.
    [moved] = scan(WrittenFile("src/app.py", old, shrunk_and_moved))
    assert moved.line == 7
    split = "import sys\n\nclass A:\n    def f(self):\n        return sys._getframe(1)\n"
    split += "\ndef g():\n    return sys._getframe(2)\n"
    # A.g's frame read is now g's: another place, so another construct.
    assert [f.line for f in scan(WrittenFile("src/app.py", grown, split))] == [8]
    assert [f.line for f in scan(WrittenFile("src/app.py", old, split))] == [8]
