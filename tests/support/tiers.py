"""Which tier a test belongs to, read from the test's code at collection (``tests/conftest.py`` sets the markers).

- ``db``: the test starts an oTree server or oTree's bots (itself, through a fixture, or through a helper that does),
  and is no browser walk and talks to no real model. CI's PostgreSQL job runs these; the SQLite job runs everything.
- ``browser``: the test (or a fixture it uses) opens Debian's Chromium (``browser``, ``page``, ``sized_page``).
- ``real_model``: it uses the llama.cpp server (fixture ``real_model``); the suite's longest module, started first.
- ``fast``: no server, no bots, no browser, no model, not marked ``slow``; plus the one ``otree test`` of every
  session config (``tests/apps/test_all_bots.py``). ``pytest -m fast`` is the tier run on every change.

A function "starts a server" when its source names one of `SERVER_STARTERS`, or calls a function of ``tests`` or
``harness`` (of its module, or an attribute of a module it imported) that does, at any depth.
"""

from __future__ import annotations

import functools
import inspect
import re
import types

SERVER_STARTERS = frozenset(
    {
        "start_server",
        "running_server",
        "run_bots",
        "script_on_server_session",
        "own_database",
        "otree_server",
        "apps_server",
        "production_server",
        "OTREE",  # the `otree` command itself (`otree test`, `otree prodserver`)
    }
)
BROWSER_FIXTURES = frozenset({"browser", "page", "sized_page"})
FAST_ANYWAY = ("tests/apps/test_all_bots.py",)  # one `otree test` of every session config
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTRIBUTE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")


@functools.cache
def _tokens(function) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The names and the ``owner.attribute`` pairs of ``function``'s source (read once per function)."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        source = ""
    return frozenset(_NAME.findall(source)), frozenset(_ATTRIBUTE.findall(source))


@functools.cache
def starts_server(function) -> bool:
    """Whether calling ``function`` starts an oTree server or bots (see the module docstring).

    >>> from harness import servers
    >>> starts_server(servers.create_session), starts_server(servers.script_on_server_session)
    (False, True)
    """
    return _starts_server(inspect.unwrap(getattr(function, "__func__", function)), frozenset())


def _ours(module: str | None) -> bool:
    """Whether ``module`` is of the tests or the harness they drive servers with (followed); the product is not."""
    return (module or "").split(".")[0] in ("tests", "harness")


def _starts_server(function, seen: frozenset) -> bool:
    if not callable(function) or function in seen or not hasattr(function, "__globals__"):
        return False
    names, attributes = _tokens(function)
    if names & SERVER_STARTERS:
        return True
    seen = seen | {function}
    namespace = function.__globals__
    for name in names:
        value = namespace.get(name)
        if inspect.isfunction(value) and _ours(value.__module__) and _starts_server(value, seen):
            return True
    for owner, attribute in attributes:
        module = namespace.get(owner)
        if isinstance(module, types.ModuleType) and _ours(module.__name__):
            value = getattr(module, attribute, None)
            if inspect.isfunction(value) and _starts_server(value, seen):
                return True
    return False


def fixture_functions(item) -> list:
    """The functions of every fixture ``item`` uses (its whole closure)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [definition.func for definitions in info.name2fixturedefs.values() for definition in definitions]


def markers_for(item) -> set[str]:
    """The tier markers of one collected test (an ``item`` of pytest; doctests have no fixtures of ours)."""
    fixtures = set(getattr(item, "fixturenames", ()))
    own = {mark.name for mark in item.iter_markers()}
    found = set()
    if fixtures & BROWSER_FIXTURES:
        found.add("browser")
    if "real_model" in fixtures:
        found.add("real_model")
    function = getattr(item, "function", None)
    server = (function is not None and starts_server(function)) or any(
        starts_server(fixture) for fixture in fixture_functions(item)
    )
    if server and not (found | own) & {"browser", "real_model"}:
        found.add("db")
    path = item.nodeid.split("::")[0]
    if path in FAST_ANYWAY or not (server or (found | own) & {"browser", "real_model", "slow", "bots"}):
        found.add("fast")
    return found
