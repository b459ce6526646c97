"""The [scan] table: parsed by hand for the hook path, and through the configuration loader."""

from __future__ import annotations

import pytest

from donegate.config import parse_config
from donegate.errors import InvalidInput
from donegate.scan import AllowRule, ScanSettings, parse_scan_table


def test_an_absent_table_blocks_fitted_code_and_allows_nothing() -> None:
    assert parse_scan_table(None) == ScanSettings("block", ())


def test_a_full_table() -> None:
    table = {
        "fitted_to_test": "warn",
        "allow": [{"construct": "frame-inspection", "path": "src/debug/**", "reason": "tracer"}],
    }
    settings = parse_scan_table(table)
    assert settings == ScanSettings(
        "warn", (AllowRule("frame-inspection", "src/debug/**", "tracer"),)
    )
    assert settings.allowed_by("frame-inspection", "src/debug/a/b.py") is not None
    assert settings.allowed_by("frame-inspection", "src/app.py") is None
    assert settings.allowed_by("hard-exit", "src/debug/a.py") is None


@pytest.mark.parametrize(
    ("table", "path"),
    [
        ([], "scan"),
        ({"fited_to_test": "warn"}, "scan.fited_to_test"),
        ({"fitted_to_test": "maybe"}, "scan.fitted_to_test"),
        ({"fitted_to_test": True}, "scan.fitted_to_test"),
        ({"allow": {"construct": "hard-exit"}}, "scan.allow"),
        ({"allow": ["hard-exit"]}, "scan.allow[0]"),
        ({"allow": [{"construct": "hard-exit", "path": "src/**"}]}, "scan.allow[0].reason"),
        (
            {"allow": [{"construct": "hard-exit", "path": "src/**", "reason": "  "}]},
            "scan.allow[0].reason",
        ),
        (
            {"allow": [{"construct": "exit", "path": "src/**", "reason": "r"}]},
            "scan.allow[0].construct",
        ),
        (
            {"allow": [{"construct": "hard-exit", "reason": "r"}]},
            "scan.allow[0].path",
        ),
        (
            {"allow": [{"construct": "hard-exit", "path": "a", "reason": "r", "why": "x"}]},
            "scan.allow[0].why",
        ),
    ],
)
def test_a_bad_table_is_rejected_naming_the_key(table: object, path: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_scan_table(table)
    assert caught.value.path == path


def test_the_configuration_loader_reads_the_scan_table() -> None:
    config = parse_config(
        '[scan]\nfitted_to_test = "off"\n'
        'allow = [{ construct = "hard-exit", path = "src/cli.py", reason = "exit codes" }]\n'
    )
    assert config.scan == ScanSettings("off", (AllowRule("hard-exit", "src/cli.py", "exit codes"),))
    assert parse_config("").scan == ScanSettings()


def test_the_configuration_loader_rejects_a_bad_scan_table() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_config('[scan]\nfitted_to_test = "sometimes"\n')
    assert caught.value.path == "scan.fitted_to_test"
