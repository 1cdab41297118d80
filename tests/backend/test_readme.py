"""The README stays short and its two commands are the ones a fresh machine needs and CI runs: install and start
(without activating the environment), install and test; every page it points to exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
START = (
    'python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && PATH="$PWD/.venv/bin:$PATH" otree devserver'
)
TEST = "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt && .venv/bin/python -m pytest -n 4"


def commands() -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)]


def test_the_readme_is_under_150_lines():
    assert len(README.splitlines()) < 150


def test_the_readme_has_exactly_the_two_commands_install_and_start_and_install_and_test():
    assert commands() == [START, TEST]


def test_the_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv" in ci
    assert "python -m pip install -q -r requirements-dev.txt" in ci
    pytest = TEST.rpartition(".venv/bin/")[2]  # the README's test command: CI runs it, adding only --durations
    assert re.search(rf"^{re.escape(pytest)}( --durations=\d+)?$", ci, flags=re.MULTILINE)
    assert "bash docs/build.sh" in ci


def test_no_otree_command_needs_an_activated_environment():
    """A bare ``otree devserver`` fails on a fresh machine: otree is only on the PATH of an activated environment. Even
    ``.venv/bin/otree devserver`` fails: it starts its server as ``otree devserver_inner`` found on the PATH (and
    prodserver its page-timeout helper as ``otree timeoutsubprocess``)."""
    for text in [README, *(path.read_text(encoding="utf-8") for path in (ROOT / "docs").rglob("*.md"))]:
        for line in text.splitlines():
            for found in re.finditer(r"(\S*)otree (devserver|prodserver|resetdb)\b", line):
                before = line[: found.start()] + found.group(1)
                if before.endswith('PATH="$PWD/.venv/bin:$PATH" '):
                    continue
                if before.endswith(".venv/bin/"):
                    assert found.group(2) == "resetdb", f"the server needs .venv/bin on the PATH: {line.strip()}"
                    continue
                typed = r"(^\s*|\$ )$" if found.group(2) == "prodserver" else r"(^\s*|`|\$ )$"  # prodserver: also named
                assert not re.search(typed, before), f"a bare otree command: {line.strip()}"


def test_every_page_the_readme_links_exists():
    links = re.findall(r"\]\((docs/[^)#]+)", README) + re.findall(r'src="(docs/[^"]+)"', README)
    assert len(links) > 15
    missing = [link for link in links if not (ROOT / link).exists()]
    assert missing == []
