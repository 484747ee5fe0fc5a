"""Documentation can't drift: every setting's env var and every command is in the README."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_every_environment_variable_read_by_settings_is_documented():
    source = (ROOT / "perfhub" / "settings.py").read_text()
    # Every helper in perfhub/env.py is named env_<type>("NAME", ...).
    names = set(re.findall(r'env_[a-z]+\(\s*"([A-Z0-9_]+)"', source))
    assert names, "no env vars found: did the helpers change?"
    missing = sorted(n for n in names if f"`{n}`" not in README)
    assert not missing, f"README configuration table lacks: {missing}"


def test_every_management_command_is_documented():
    commands = [p.stem for p in (ROOT / "artifacts" / "management" / "commands").glob("[!_]*.py")]
    missing = sorted(c for c in commands if f"manage.py {c}" not in README)
    assert not missing, f"README lacks commands: {missing}"


def test_readme_shows_the_two_commands_at_the_top():
    top = README[:800]
    assert "make run" in top and "make test" in top
