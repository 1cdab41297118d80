"""Is a page usable by everyone? One check, axe-core run inside the page, for every browser test's page states.

``assert_accessible(page, language)`` injects axe-core (``tests/node_modules/axe-core/axe.min.js``, the version pinned
in ``tests/package.json`` and ``tests/package-lock.json``; installed by ``npm ci`` the first time it is needed, never
fetched while a page runs), runs it with the WCAG 2.0/2.1/2.2 A and AA rules and axe's best practices, and fails on:

- every critical or serious violation;
- every moderate violation not listed in ``MODERATE_LEFT`` (each with the reason it is left);
- an ``<html>`` whose ``lang`` is not the session's language.

Minor findings are not failures. Left out of the check: oTree's debug panel (``.debug-info``), which only a devserver
shows and no participant of a study sees. ``docs/accessibility.md`` says what is checked and how to run it.
"""

from __future__ import annotations

import fcntl
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import PROJECT_ROOT
from harness.servers import ensure_debian_package

TESTS = PROJECT_ROOT / "tests"
AXE = TESTS / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
FAILING_IMPACTS = ("critical", "serious")
# Moderate findings left as they are, by axe rule id, with the reason (docs/accessibility.md repeats them).
MODERATE_LEFT: dict[str, str] = {}
EXCLUDED = [".debug-info"]

_RUN_AXE_JS = """
async ([tags, excluded]) => {
  const context = {include: [document], exclude: excluded.map((selector) => [selector])};
  const found = await window.axe.run(context, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return found.violations.map((rule) => ({
    id: rule.id, impact: rule.impact, help: rule.help,
    nodes: rule.nodes.slice(0, 5).map((node) => ({target: node.target.join(' '), summary: node.failureSummary})),
    count: rule.nodes.length,
  }));
}
"""


@functools.cache
def axe_path() -> str:
    """The pinned axe-core script, installed from the npm registry by ``npm ci`` when it is not there yet."""
    if AXE.is_file():
        return str(AXE)
    if shutil.which("npm") is None:
        ensure_debian_package("/usr/bin/npm", "npm")  # a fresh machine: the README's test command installs it
    with (Path(tempfile.gettempdir()) / "axe-core-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs side by side (CI) install it once
        if not AXE.is_file():
            npm = shutil.which("npm") or "/usr/bin/npm"
            subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=TESTS, check=True)
    return str(AXE)


def violations(page) -> list[dict]:
    """axe-core's violations on ``page`` as it is now (each: ``id``, ``impact``, ``help``, ``nodes``, ``count``).

    ``page`` must run scripts (a page opened without JavaScript never loads axe-core: check its HTML in a page that
    does, as ``tests/browser/test_languages.py`` does for the room's welcome page)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=axe_path())
    return page.evaluate(_RUN_AXE_JS, [TAGS, EXCLUDED])


def failures(found: list[dict]) -> list[dict]:
    """The violations that fail the check: critical and serious ones, and moderate ones not in ``MODERATE_LEFT``.

    >>> [rule["id"] for rule in failures([
    ...     {"id": "label", "impact": "critical"}, {"id": "region", "impact": "moderate"},
    ...     {"id": "x", "impact": "minor"}])]
    ['label', 'region']
    """
    return [
        rule
        for rule in found
        if rule["impact"] in FAILING_IMPACTS or (rule["impact"] == "moderate" and rule["id"] not in MODERATE_LEFT)
    ]


def describe(found: list[dict]) -> str:
    lines = []
    for rule in found:
        lines.append(f"- {rule['id']} ({rule['impact']}, {rule['count']} elements): {rule['help']}")
        lines.extend(f"    {node['target']}: {node['summary'].splitlines()[-1].strip()}" for node in rule["nodes"])
    return "\n".join(lines)


def assert_accessible(page, language: str | None = None, *, where: str = "") -> None:
    """Fail, naming each rule and element, when axe-core finds a failing violation on ``page`` or, with ``language``
    given, when ``<html lang>`` is not ``language``."""
    place = where or page.url
    if language is not None:
        lang = page.locator("html").get_attribute("lang")
        assert lang == language, f"<html lang={lang!r}> on a {language} page {place}"
    failing = failures(violations(page))
    size = page.viewport_size or {}
    assert not failing, f"axe-core finds on {place} at {size.get('width')}x{size.get('height')}:\n" + describe(failing)
