"""`backend` stays pure: it never imports oTree, so every module runs and tests without a project."""

from __future__ import annotations

import ast
import subprocess
import sys

from harness import PROJECT_ROOT


def test_no_backend_module_imports_otree():
    offenders = []
    for path in sorted((PROJECT_ROOT / "backend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "otree"
            ]
    assert offenders == []


def test_backend_imports_outside_a_project_folder(tmp_path):
    # Importing otree.api outside a project exits; the backend must not need a project at all.
    code = (
        "import pkgutil, importlib, backend; [importlib.import_module(m.name) for m in "
        "pkgutil.walk_packages(backend.__path__, 'backend.') if not m.name.endswith('__main__')]; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_study_flow_imports_outside_a_project_folder(tmp_path):
    # study_flow is oTree-side, but imports oTree only when an app calls for a field: tests read its texts and rules.
    result = subprocess.run(
        [sys.executable, "-c", "import study_flow, sys; print('otree' not in sys.modules and 'ok')"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == "ok", result.stderr
