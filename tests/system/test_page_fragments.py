"""A page's fragment rendered once (lab_server/page_cost.fragment): once per key, again when oTree's loader gives
another template (its devserver reloads an edited file), and a bounded number kept."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import lab_server.otree_internals as otree_internals
from lab_server import page_cost


class Template:
    def __init__(self, text: str, renders: list):
        self.text, self.renders = text, renders

    def render(self, context: dict) -> str:
        self.renders.append(context)
        return self.text.format(**context)


class Loader:
    def __init__(self):
        self.templates: dict[str, Template] = {}

    def load(self, name: str) -> Template:
        return self.templates[name]


@pytest.fixture
def loader(monkeypatch):
    loader = Loader()
    monkeypatch.setattr(otree_internals, "template_loader", loader, raising=False)
    monkeypatch.setattr(page_cost, "FRAGMENTS", OrderedDict())
    return loader


def test_a_fragment_is_rendered_once_per_key(loader):
    renders = []
    loader.templates["rows.html"] = Template("rows of {agent}", renders)
    for _ in range(3):
        assert page_cost.fragment("rows.html", ("S1", 1, "Ann"), dict(agent="Ann")) == "rows of Ann"
    assert page_cost.fragment("rows.html", ("S1", 1, "Bob"), dict(agent="Bob")) == "rows of Bob"
    assert page_cost.fragment("rows.html", ("S2", 1, "Ann"), dict(agent="Ann")) == "rows of Ann"
    assert [context["agent"] for context in renders] == ["Ann", "Bob", "Ann"]


def test_a_reloaded_template_is_rendered_again(loader):
    renders = []
    loader.templates["rows.html"] = Template("rows of {agent}", renders)
    page_cost.fragment("rows.html", "key", dict(agent="Ann"))
    loader.templates["rows.html"] = Template("edited rows of {agent}", renders)  # the devserver read the file again
    assert page_cost.fragment("rows.html", "key", dict(agent="Ann")) == "edited rows of Ann"
    assert page_cost.fragment("rows.html", "key", dict(agent="Ann")) == "edited rows of Ann"
    assert len(renders) == 2


def test_the_least_recently_usedFRAGMENTS_are_dropped(loader, monkeypatch):
    monkeypatch.setattr(page_cost, "MAX_FRAGMENTS", 2)
    renders = []
    loader.templates["rows.html"] = Template("rows of {agent}", renders)
    for agent in ("Ann", "Bob", "Ann", "Cem", "Ann", "Bob"):
        page_cost.fragment("rows.html", agent, dict(agent=agent))
    assert [context["agent"] for context in renders] == ["Ann", "Bob", "Cem", "Bob"]
    assert len(page_cost.FRAGMENTS) == 2
