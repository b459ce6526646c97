"""The README's examples are real: its configuration loads as written."""

import re
from pathlib import Path

from donegate.config import load_config

README = Path(__file__).parents[1] / "README.md"


def test_the_readme_configuration_loads(tmp_path: Path) -> None:
    block, *_ = re.findall(r"```toml\n(.*?)```", README.read_text(), re.S)
    path = tmp_path / "donegate.toml"
    path.write_text(block)
    config = load_config(path, environ={"DATABASE_URL": "sqlite:////nonexistent.db"})
    assert [spec.settings.check_type for spec in config.checks] == [
        "test_run",
        "endpoint_health",
        "state_readback",
    ]
    assert config.policy is not None
    assert config.policy.on_unverified == "block"
