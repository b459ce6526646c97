"""``donegate.toml``: good files load, bad ones are rejected naming the key, secrets stay out."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from donegate.config import Config, load_config, parse_config
from donegate.errors import InvalidInput
from donegate.redact import Redactor

GOOD = """
    [policy]
    id = "unattended-deploy"
    requires = ["test_run"]
    max_age_s = 600
    on_unverified = "warn"

    [[checks]]
    check_type = "test_run"
    command = ["python", "-m", "pytest", "-q", "tests"]
    must_pass = ["tests/test_billing.py::test_zip_update"]
    protect = ["tests/**"]
    covers = ["src/**"]
    timeout_s = 900
"""


def parse(text: str, environ: dict[str, str] | None = None) -> Config:
    return parse_config(textwrap.dedent(text), base_dir=Path("/srv/app"), environ=environ or {})


def rejected(text: str, environ: dict[str, str] | None = None) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        parse(text, environ)
    return info.value


def test_good_file_loads_with_its_policy_applied_as_config(tmp_path: Path) -> None:
    path = tmp_path / "donegate.toml"
    path.write_text(textwrap.dedent(GOOD))
    config = load_config(path)
    assert config.base_dir == tmp_path
    applied = config.applied_policy()
    assert applied is not None
    assert applied.source == "config"
    assert applied.on_unverified == "warn"
    assert len(config.checks) == 1
    assert config.checks[0].settings.expected == {"exit_code": 0}
    assert config.checks[0].label == "checks[0] test_run"


def test_missing_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read configuration"):
        load_config(tmp_path / "nope.toml")


def test_bad_toml_is_invalid_input() -> None:
    assert "not valid TOML" in rejected("[[checks]\n").message


def test_unknown_top_level_key_is_named() -> None:
    assert rejected('colour = "blue"').path == "colour"


def test_unknown_check_key_is_named() -> None:
    error = rejected(GOOD + "retries = 3\n")
    assert error.path == "checks[0].retries"


def test_bad_value_is_named_with_its_index() -> None:
    text = GOOD + '\n[[checks]]\ncheck_type = "test_run"\ncommand = ["x"]\ntimeout_s = -1\n'
    error = rejected(text)
    assert error.path == "checks[1].timeout_s"
    assert "greater than 0" in error.message


def test_unknown_check_type_lists_the_known_ones() -> None:
    error = rejected('[[checks]]\ncheck_type = "vibes"\n')
    assert error.path == "checks[0].check_type"
    assert "test_run" in error.message


def test_missing_check_type_is_named() -> None:
    assert rejected('[[checks]]\ncommand = ["x"]\n').path == "checks[0].check_type"


def test_command_string_needs_shell() -> None:
    error = rejected('[[checks]]\ncheck_type = "test_run"\ncommand = "pytest -q"\n')
    assert error.path == "checks[0]"
    assert "shell = true" in error.message


def test_policy_unknown_key_is_named() -> None:
    assert rejected("[policy]\nrequirez = []\n").path == "policy.requirez"


def test_policy_bad_value_is_named() -> None:
    assert rejected('[policy]\non_unverified = "shrug"\n').path == "policy.on_unverified"


def test_environment_variables_expand() -> None:
    text = '[[checks]]\ncheck_type = "test_run"\ncommand = ["${RUNNER}", "$${LITERAL}"]\n'
    config = parse(text, {"RUNNER": "pytest"})
    assert config.checks[0].settings.command == ["pytest", "${LITERAL}"]  # type: ignore[attr-defined]


def test_unset_variable_is_named() -> None:
    text = '[[checks]]\ncheck_type = "test_run"\ncommand = ["${NOPE_NOT_SET}"]\n'
    error = rejected(text)
    assert error.path == "checks[0].command[0]"
    assert "NOPE_NOT_SET is not set" in error.message


def test_secret_never_appears_in_an_error_message() -> None:
    text = '[[checks]]\ncheck_type = "test_run"\ncommand = ["x"]\ntimeout_s = "${TOKEN}"\n'
    error = rejected(text, {"TOKEN": "s3cr3t-token-value"})
    assert error.path == "checks[0].timeout_s"
    assert "s3cr3t-token-value" not in str(error)
    assert "***" in str(error)


def test_expanded_values_are_masked_but_expectations_are_not() -> None:
    text = """
        [[checks]]
        check_type = "test_run"
        command = ["deploy-check", "--token", "${TOKEN}"]
        expected = { exit_code = 0 }
    """
    config = parse(text, {"TOKEN": "tok-123456"})
    assert config.redactor.text("sent tok-123456") == "sent ***"


def test_redactor_masks_url_passwords() -> None:
    redact = Redactor()
    assert redact.text("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"
    assert redact.text("postgresql://u:p@ss@db/x and more") == "postgresql://u:***@db/x and more"
    assert redact.text("https://example.com/a@b") == "https://example.com/a@b"
    assert redact.json({"k": ["mysql://root:pw@h/db"]}) == {"k": ["mysql://root:***@h/db"]}


def test_short_values_are_not_treated_as_secrets() -> None:
    assert Redactor().with_secrets(["80", "abcd"]).secrets == frozenset({"abcd"})
