"""The documentation's reference pages are made from the code: a session key, an export column, a command-line option
or an environment variable added to the code without its page fails here (run ``python docs/generate.py``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
generate = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(generate)
PAGES = generate.pages()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_reference_page_is_up_to_date_with_the_code(name):
    stored = (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8")
    assert stored == PAGES[name], f"docs/reference/{name} is out of date: run python docs/generate.py"


def test_the_pages_hold_every_key_column_and_option_of_the_code():
    from backend.codebook import EXPORTS
    from backend.dond.settings import KEYS

    keys = PAGES["session-keys.md"]
    assert all(f"| `{key}` |" in keys for key in KEYS)
    columns = PAGES["exports.md"]
    dond_games = columns.split("## `dond_games`")[1].split("\n## ")[0]
    for column in EXPORTS[("dond", "custom_export_dond_games")].columns:
        assert f"| `{column.name}` | {column.type} |" in dond_games
    assert "| `--include-tests` |" in PAGES["cli.md"] and "### `python -m backend bonus`" in PAGES["cli.md"]


def test_a_new_setting_changes_the_generated_page(monkeypatch):
    """The comparison can fail: a key added to an app's model shows up in the regenerated page, with its words."""
    from backend.core import session_keys
    from backend.social.settings import SocialSettings
    from study_flow import config

    class Wider(SocialSettings):
        brand_new_key: session_keys.Whole = session_keys.key(3, "A new key", ge=0, le=9)
        """Its one line of help."""

    monkeypatch.setattr(config, "app_keys", lambda: {"social_eval": Wider})
    page = generate.session_keys_page()
    assert "| `brand_new_key` | `3` | a whole number from 0 to 9 | **A new key**: Its one line of help. |" in page
    assert page != PAGES["session-keys.md"]


_READS = re.compile(
    r"""(?:environ(?:\.get)?[\[(]|getenv\(|_setting\(|variable\()\s*["']([A-Z][A-Z0-9_]+)["']|ENV\.([A-Z][A-Z0-9_]+)"""
)


def test_every_environment_variable_the_code_reads_is_listed():
    from backend.core.environment import VARIABLES

    read = set()
    for folder in ("backend", "study_flow", "lab_server", "dond", "social_eval", "payoff_reasoning_eval", "bias_tests"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= {"".join(names) for names in _READS.findall(path.read_text(encoding="utf-8"))}
    read |= {"".join(names) for names in _READS.findall((ROOT / "settings.py").read_text(encoding="utf-8"))}
    from backend.core.release import RELEASE_KEY_VARIABLE

    read.add(RELEASE_KEY_VARIABLE)
    assert read, "the scan found nothing: the pattern is wrong"
    assert read - set(VARIABLES) == set(), "read in the code but not in backend/core/environment.py"


def test_the_boundary_between_session_keys_and_environment_variables_is_kept():
    """A variable is a server's default for a session key only when it says so, and names a key that exists."""
    from backend.core.environment import VARIABLES
    from study_flow.config import SharedKeys, app_keys

    keys = {key for model in [SharedKeys, *app_keys().values()] for key in model.model_fields}
    named = {variable.session_key for variable in VARIABLES.values() if variable.session_key}
    assert named and named <= keys
    for variable in VARIABLES.values():
        twin = {key for key in keys if key.upper() in variable.name and len(key) > 8}
        assert twin <= {variable.session_key}, f"{variable.name} shadows the session key(s) {twin} without saying so"
    assert "## Session keys or environment variables" in PAGES["environment.md"]


def test_every_session_key_on_the_page_has_a_meaning_and_allowed_values():
    rows = [line for line in PAGES["session-keys.md"].splitlines() if line.startswith("| `")]
    assert len(rows) > 60
    for row in rows:
        key, _default, allowed, meaning = (cell.strip() for cell in row.strip("|").split(" | "))
        assert meaning.startswith("**") and allowed, (
            f"{key} has no words (the field's title and description) or no allowed values"
        )
