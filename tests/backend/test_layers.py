"""The layer order, checked on the tree: every import of the product runs down, never up, never across.

    settings  >  apps (dond, social_eval, payoff_reasoning_eval, bias_tests)  >  lab_server  >  study_flow
              >  backend's command line and codebook (backend.__main__, backend.codebook)
              >  backend's domains (backend.dond, backend.social, backend.bias, backend.reasoning)  >  backend.core

A module may import its own package and anything in a lower layer; an app never imports another app, a domain never
another domain; no product module imports ``tests``, ``bench`` or ``harness``. Outside the product, ``harness`` (what
drives a running study from outside: servers, sessions, participants) may import the product and is imported by
``tests`` and ``bench`` alone; it never imports them, and ``bench`` never imports ``tests``. Imports inside functions
count as much as those at the top, and so do ``importlib.import_module`` calls naming a module. A lower layer learns
of a higher one by registration (e.g. ``lab_server.admin_pages.register_app_page``), or by a name it is given as
configuration (``backend.core.llm.fake_server.responder_named``). docs/developers/architecture.md draws the same order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness import PROJECT_ROOT

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
DOMAINS = ("backend.dond", "backend.social", "backend.bias", "backend.reasoning")
# Highest first: (layer name, the module prefixes it holds, whether its members may import each other).
LAYERS = (
    ("settings", ("settings",), False),
    ("apps", APPS, False),
    ("lab_server", ("lab_server",), True),
    ("study_flow", ("study_flow",), True),
    ("backend's command line and codebook", ("backend.__main__", "backend.codebook"), True),
    ("backend's domains", DOMAINS, False),
    ("backend.core", ("backend.core", "backend"), True),
)
OUTSIDE = ("tests", "bench", "harness")  # never imported by the product
# Outside the product, each of these never imports the ones named (it may import the product).
OUTSIDE_NEVER = {"harness": ("tests", "bench"), "bench": ("tests",)}
SKIPPED = {".venv", ".git", "node_modules", "__pycache__", "tests", "docs", "site"}


def owner(module: str) -> tuple[int, str] | None:
    """(layer index, the member prefix) of a module of the product, else None (the standard library, oTree...)."""
    for index, (_, members, _) in enumerate(LAYERS):
        for member in members:
            if module == member or module.startswith(member + "."):
                return index, member
    return None


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth, relative imports made absolute."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif (  # importlib.import_module("settings"): an import all the same
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def violations(root: Path) -> list[str]:
    """Every import of the tree at ``root`` that runs up or across the layers, or into tests or bench."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if SKIPPED & set(path.relative_to(root).parts):
            continue
        me = module_name(path, root)
        mine = owner(me)
        if mine is None:
            found += outside_violations(path, root)
            continue
        seen_lines = set()
        for line, target in imports_of(path, root):
            if line in seen_lines:
                continue  # one finding per import statement
            where = f"{path.relative_to(root)}:{line} imports {target}"
            theirs = owner(target)
            if target.split(".")[0] in OUTSIDE:
                problem = f"the product never imports {target.split('.')[0]}"
            elif theirs is None or theirs[1] == mine[1]:
                continue
            elif theirs[0] < mine[0]:
                problem = f"{LAYERS[mine[0]][0]} is below {LAYERS[theirs[0]][0]}"
            elif theirs[0] == mine[0] and not LAYERS[mine[0]][2]:
                problem = f"one of {LAYERS[mine[0]][0]} never imports another"
            else:
                continue
            found.append(f"{where}: {problem}")
            seen_lines.add(line)
    return found


def outside_violations(path: Path, root: Path) -> list[str]:
    """The imports of a module of ``harness`` or ``bench`` into what it never imports (``OUTSIDE_NEVER``)."""
    me = module_name(path, root).split(".")[0]
    found, seen_lines = [], set()
    for line, target in imports_of(path, root):
        theirs = target.split(".")[0]
        if theirs in OUTSIDE_NEVER.get(me, ()) and line not in seen_lines:
            found.append(f"{path.relative_to(root)}:{line} imports {target}: {me} never imports {theirs}")
            seen_lines.add(line)
    return found


def test_every_import_of_the_product_runs_down_the_layers():
    assert violations(PROJECT_ROOT) == []


@pytest.mark.parametrize(
    ("path", "source", "says"),
    [
        ("backend/core/leak.py", "from backend.dond import game\n", "backend.core is below backend's domains"),
        ("backend/core/leak.py", "def f():\n    import lab_server\n", "backend.core is below lab_server"),
        ("backend/dond/leak.py", "from backend.social import forms\n", "one of backend's domains never imports"),
        ("study_flow/leak.py", "from lab_server import places\n", "study_flow is below lab_server"),
        ("lab_server/leak.py", "import settings\n", "lab_server is below settings"),
        (
            "study_flow/leak.py",
            "import importlib\nimportlib.import_module('settings')\n",
            "study_flow is below settings",
        ),
        ("dond/leak.py", "from social_eval import tasks\n", "one of apps never imports another"),
        ("lab_server/leak.py", "from tests.support import tiers\n", "the product never imports tests"),
        ("dond/leak.py", "from harness.servers import create_session\n", "the product never imports harness"),
        ("backend/core/leak.py", "def f():\n    import harness\n", "the product never imports harness"),
        ("harness/leak.py", "from tests.support import tiers\n", "harness never imports tests"),
        ("harness/leak.py", "from bench import probes\n", "harness never imports bench"),
        ("bench/leak.py", "from tests.support import tiers\n", "bench never imports tests"),
    ],
)
def test_a_deliberate_upward_import_is_found(tmp_path, path, source, says):
    for folder in ("backend/core", "backend/dond", "study_flow", "lab_server", "dond", "harness", "bench"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "backend" / "__init__.py").write_text("")
    (tmp_path / path).write_text(source)
    (found,) = violations(tmp_path)
    assert found.startswith(f"{path}:") and says in found, found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the product it imports (``from pkg import sub`` names both ``pkg`` and ``pkg.sub``)."""
    modules = {
        module_name(path, root): path
        for path in sorted(root.rglob("*.py"))
        if not SKIPPED & set(path.relative_to(root).parts) and owner(module_name(path, root)) is not None
    }
    return {
        name: {target for _, target in imports_of(path, root) if target in modules and target != name}
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_files_outside_one_app():
    """Modules import each other in no loop (an app's own modules may: oTree loads an app as one unit)."""
    outside_apps = [group for group in circles(import_graph(PROJECT_ROOT)) if group[0].split(".")[0] not in APPS]
    assert outside_apps == []


def test_a_deliberate_circle_is_found(tmp_path):
    (tmp_path / "study_flow").mkdir()
    (tmp_path / "study_flow" / "__init__.py").write_text("from .a import x\n")
    (tmp_path / "study_flow" / "a.py").write_text("from . import b\nx = 1\n")
    (tmp_path / "study_flow" / "b.py").write_text("")
    assert circles(import_graph(tmp_path)) == [["study_flow", "study_flow.a"]]
