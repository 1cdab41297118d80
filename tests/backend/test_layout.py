"""The layout's rules, checked on the tree itself: small modules, no private name imported across modules, one place
for oTree's internals."""

from __future__ import annotations

import ast
from pathlib import Path

from harness import PROJECT_ROOT

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
OWN_PACKAGES = ("backend", "study_flow", "lab_server", "tests", "bench", *APPS)
MAX_APP_INIT_LINES = 300
MAX_BACKEND_MODULE_LINES = 500


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (PROJECT_ROOT / folder).rglob("*.py"))


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_app_modules_read_like_a_table_of_contents():
    too_long = {app: line_count(PROJECT_ROOT / app / "__init__.py") for app in APPS}
    assert {app: n for app, n in too_long.items() if n > MAX_APP_INIT_LINES} == {}


def test_no_backend_module_is_over_the_limit():
    sizes = {str(path.relative_to(PROJECT_ROOT)): line_count(path) for path in python_files("backend")}
    assert {name: n for name, n in sizes.items() if n > MAX_BACKEND_MODULE_LINES} == {}


def imported_private_names(path: Path) -> list[str]:
    """``from our.module import _name`` and ``our_module._name`` attribute reads of imported modules of ours."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    module_aliases = {}
    for node in ast.walk(tree):
        ours = isinstance(node, ast.ImportFrom) and (
            node.level > 0 or (node.module or "").split(".")[0] in OWN_PACKAGES
        )
        if ours:
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module}.{alias.name} (line {node.lineno})")
                else:
                    module_aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN_PACKAGES:
                    module_aliases[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{module_aliases[node.value.id]}.{node.attr} (line {node.lineno})")
    return found


def test_no_module_imports_another_modules_private_name():
    offenders = {
        str(path.relative_to(PROJECT_ROOT)): names
        for path in python_files(*OWN_PACKAGES)
        if (names := imported_private_names(path))
    }
    assert offenders == {}


def test_the_private_name_check_sees_every_form(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from backend.core import csvio\nfrom backend.dond.game import _hidden\ncsvio._secret()\n"
        "from .views import _page\nfrom pandas import _libs\n"
    )
    assert sorted(imported_private_names(sample)) == [
        ".views._page (line 4)",
        "backend.core.csvio._secret (line 3)",
        "backend.dond.game._hidden (line 2)",
    ]
