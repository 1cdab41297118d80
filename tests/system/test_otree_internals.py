"""oTree's internals we rely on (lab_server/otree_internals.py) are still there, of the same kind, with the same
parameters; and nothing else in the project reaches past ``otree.api``.

An oTree upgrade that renames ``lock2``, moves ``_export_csv`` or changes ``run_creating_session_functions``'s
parameters fails here, naming the internal and the reason we use it, instead of silently dropping a guard.

The checks run in a fresh interpreter in the project folder: there oTree's modules import as in the server, and no
guard of lab_server has replaced what is checked (the guards wrap the very functions whose signatures we check).
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from harness import PROJECT_ROOT

INTERNALS_FILE = PROJECT_ROOT / "lab_server" / "otree_internals.py"


def load_internals_alone():
    """The module by its file, without importing the ``lab_server`` package (whose import installs the guards)."""
    spec = importlib.util.spec_from_file_location("otree_internals_alone", INTERNALS_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


INTERNALS = load_internals_alone()
ENTRIES = {**INTERNALS.USED, **INTERNALS.PATCHED}

CHECK = """
import importlib.util, inspect, json, sys
spec = importlib.util.spec_from_file_location("otree_internals_alone", sys.argv[1])
internals = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = internals
spec.loader.exec_module(internals)
found = {}
for name, internal in {**internals.USED, **internals.PATCHED}.items():
    try:
        value = internals.locate(internal.where)
    except (ImportError, AttributeError) as error:
        found[name] = {"missing": f"{type(error).__name__}: {error}"}
        continue
    if inspect.ismodule(value):
        kind = "module"
    elif inspect.isclass(value):
        kind = "class"
    elif inspect.iscoroutinefunction(value):
        kind = "coroutine function"
    elif inspect.isfunction(value) or inspect.ismethod(value):
        kind = "function"
    else:
        kind = type(value).__name__
    try:
        params = list(inspect.signature(value).parameters) if callable(value) else []
    except (TypeError, ValueError):
        params = []
    found[name] = {"kind": kind, "params": params}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def found() -> dict:
    """What oTree has at each listed place, read in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", CHECK, str(INTERNALS_FILE)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_otree_still_has_it(found, name):
    internal = ENTRIES[name]
    what = found[name]
    assert "missing" not in what, (
        f"oTree no longer has {internal.where} ({what['missing']}); we use it: {internal.reason}"
    )
    if internal.kind == "attribute":  # a column or property of a model class: present is all we need
        return
    assert what["kind"] == internal.kind, f"{internal.where} is now a {what['kind']}, not a {internal.kind}"
    assert what["params"][: len(internal.params)] == list(internal.params), (
        f"{internal.where} now takes {what['params']}; we call or wrap it with {list(internal.params)} "
        f"({internal.reason})"
    )


def test_every_entry_gives_its_reason():
    for name, internal in ENTRIES.items():
        assert len(internal.reason.split()) >= 4, name
        assert re.fullmatch(r"otree(\.\w+)*(:\w+(\.\w+)*)?", internal.where), name
    for where, internal in INTERNALS.PATCHED.items():
        assert internal.where == where


def test_replace_refuses_a_place_not_listed():
    with pytest.raises(KeyError, match="not listed"):
        INTERNALS.replace("otree.export:export_wide", lambda original: original)


def test_nothing_else_reaches_past_otree_api():
    """Outside lab_server/otree_internals.py, the project imports from oTree only ``otree.api``."""
    pattern = re.compile(r"^\s*(from\s+otree(\.(?!api\b)\w+)+\s+import|import\s+otree\b(?!\.api\b))", re.MULTILINE)
    skipped = {".venv", ".git", "node_modules", "__pycache__"}
    offenders = []
    for path in sorted(PROJECT_ROOT.rglob("*.py")):
        relative = path.relative_to(PROJECT_ROOT)
        if skipped & set(relative.parts) or path == INTERNALS_FILE:
            continue
        for match in pattern.finditer(path.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{relative}: {match.group(0).strip()}")
    assert not offenders, "use lab_server.otree_internals instead of:\n" + "\n".join(offenders)
