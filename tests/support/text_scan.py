"""Participant-facing words outside the gettext catalogues: a scan of the product's source (no import, no server).

Three rules, each over Python's syntax tree (docstrings, comments and the English source tables, the literal in
``english("<domain>", {...})``, are never findings):

- ``texts``: a texts module (``study_flow/texts.py``, ``<app>/texts.py``) holds no phrase (two words with a space)
  outside its source tables: a table of sentences added beside them is found;
- ``table``: no module of the product (but `MODEL_WORDS`) holds a dict with two or more language codes as keys whose values hold a
  phrase (the per-language table the catalogues replaced: ``{"en": "Please ...", "de": "Bitte ..."}``);
- ``template``: a participant page's template (``_templates/global/``, oTree's participant base templates we override,
  every app's page templates but its admin report) has no word outside its tags, expressions and comments;
- ``sentence``: the modules that build what a participant reads (`PARTICIPANT_MODULES`) hold no English sentence
  literal (a capital letter, then two or more words), except in ``raise`` (a researcher's error), a model field's
  ``doc=`` (the codebook), an app's ``doc`` (the admin's), a logging call or a regular expression, and the few `KNOWN` ones, each with its reason.

>>> findings_in("x.py", 'T = {"en": "Please wait.", "de": "Bitte warten."}\\n')
['x.py:1: table: a table keyed by languages']
>>> findings_in("study_flow/texts.py", 'S = english("study_flow", {"k": "Please wait."})\\nX = "Go on now"\\n')
["study_flow/texts.py:2: texts: 'Go on now'"]
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from backend.core import catalogues

ROOT = catalogues.ROOT
TEXTS_MODULES = (
    "study_flow/texts.py",
    "dond/texts.py",
    "social_eval/texts.py",
    "payoff_reasoning_eval/texts.py",
    "bias_tests/texts.py",
)
# The modules that build participant pages, refusals and live messages.
PARTICIPANT_MODULES = (
    *TEXTS_MODULES,
    "backend/dond/scoring.py",
    "backend/dond/treatments.py",
    "backend/social/forms.py",
    "lab_server/limits.py",
    "lab_server/admission.py",
    "lab_server/budgets.py",
    "lab_server/places.py",
    "lab_server/languages.py",
    "lab_server/entry.py",
    "lab_server/refusals.py",
    "study_flow/pages.py",
    "study_flow/entry.py",
    "study_flow/workload.py",
    "dond/views.py",
    "dond/live.py",
    "social_eval/views.py",
    "social_eval/form.py",
    "payoff_reasoning_eval/judging.py",
    "dond/__init__.py",
    "social_eval/__init__.py",
    "payoff_reasoning_eval/__init__.py",
    "bias_tests/__init__.py",
)
# Modules whose per-language tables are a model's words, not ours to a participant: prompts stay where they are (the
# scripted and demo players' moves are a model's moves, shown as the counterpart's).
MODEL_WORDS = (
    "backend/bias/prompts.py",
    "backend/dond/agency.py",
    "backend/dond/demo_responder.py",
    "backend/dond/prompts.py",
    "backend/dond/protocol.py",
)
# Sentences the scan finds that no participant reads, each with its reason (file, the sentence's start).
KNOWN = {
    ("lab_server/limits.py", "Too many failed "): "the admin's login and the REST key: researchers",
    ("lab_server/budgets.py", "Too many requests"): "a bot or script hitting the REST API, never a page",
    ("backend/dond/treatments.py", "The session key "): "a launch check's finding: researchers",
    # Model fields' labels no page shows: the pages write their own question from the catalogue (only Consent renders
    # {{ formfields }}, and its field is study_flow's, labelled from the catalogue).
    ("payoff_reasoning_eval/__init__.py", "Is the reasoning of the first"): "a label no page shows",
    ("payoff_reasoning_eval/__init__.py", "Is the reasoning of the last"): "a label no page shows",
    ("bias_tests/__init__.py", "Your answer"): "a label no page shows",
}
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(?:_[A-Z]{2})?$")
PHRASE = re.compile(r"[^\W\d_]{2,}[ \u00a0]+[^\W\d_]{2,}")
SENTENCE = re.compile(r"^[A-Z][^\W\d_]*[ \u00a0]+[^\W\d_]+")
_SKIPPED_CALLS = frozenset({"english", "compile", "debug", "info", "warning", "error", "exception", "getLogger"})


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            found.add(id(first.value))
    return found


def _skipped(tree: ast.AST) -> set[int]:
    """The string nodes no rule reads: docstrings, the source tables, errors raised, logging, regular expressions,
    a model field's ``doc=``."""
    found = _docstrings(tree)
    for node in ast.walk(tree):
        inside = ()
        called = getattr(node.func, "id", getattr(node.func, "attr", None)) if isinstance(node, ast.Call) else None
        if called in _SKIPPED_CALLS or isinstance(node, ast.Raise | ast.Assert):
            inside = ast.walk(node)
        elif isinstance(node, ast.keyword) and node.arg == "doc":
            inside = ast.walk(node.value)
        elif isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "doc" for target in node.targets):
            inside = ast.walk(node.value)  # an app's doc: the admin's description of the app
        found |= {id(child) for child in inside}
    return found


def _strings(node: ast.AST):
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child


def findings_in(relative: str, source: str) -> list[str]:
    """What the three rules find in one module's ``source`` (``relative``: its path in the repository)."""
    tree = ast.parse(source)
    skipped = _skipped(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and id(node) not in skipped and relative not in MODEL_WORDS:
            codes = [key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]
            by_language = sum(bool(LANGUAGE_CODE.match(code)) for code in codes) >= 2 and "en" in codes
            if by_language and any(PHRASE.search(text.value) for value in node.values for text in _strings(value)):
                found.append(f"{relative}:{node.lineno}: table: a table keyed by languages")
                skipped |= {id(child) for child in ast.walk(node)}
    for node in _strings(tree):
        if id(node) in skipped:
            continue
        text = node.value
        if relative in TEXTS_MODULES and PHRASE.search(text):
            found.append(f"{relative}:{node.lineno}: texts: {text[:60]!r}")
        elif (
            relative in PARTICIPANT_MODULES
            and SENTENCE.match(text.strip())
            and not any(relative == path and text.startswith(start) for path, start in KNOWN)
        ):
            found.append(f"{relative}:{node.lineno}: sentence: {text[:60]!r}")
    return sorted(found, key=lambda line: (line.split(":")[0], int(line.split(":")[1])))


_TEMPLATE_CODE = re.compile(
    r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}|\{#.*?#\}|<script.*?</script>|<style.*?</style>|\{\{.*?\}\}|\{%.*?%\}"
    r"|<[^>]*>|&[a-z]+;|&#\d+;",
    re.S,
)


def template_findings(relative: str, text: str) -> list[str]:
    """A participant template's words outside its code (template tags, expressions, comments, HTML tags).

    >>> template_findings("x.html", "<p>{{ t.intro }}</p>{# a note #}"), template_findings("x.html", "<b>Next</b>")
    ([], ["x.html: template: ['Next']"])
    """
    found = re.findall(r"[^\W\d_]{2,}", _TEMPLATE_CODE.sub(" ", text))
    return [f"{relative}: template: {found[:10]}"] if found else []


def participant_templates() -> list[Path]:
    apps = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
    found = sorted((ROOT / "_templates" / "global").glob("*.html"))
    found += [ROOT / "_templates" / "otree" / "Base_UserFacing.html"]
    found += [path for app in apps for path in sorted((ROOT / app).glob("*.html")) if "admin" not in path.name]
    return found


def product_modules() -> list[Path]:
    return [
        path
        for folder in catalogues.SOURCE_DIRS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "/data/" not in path.as_posix() and "__pycache__" not in path.parts
    ]


def stray_texts() -> list[str]:
    """Every finding in the product's modules (empty: every participant word is in the catalogues)."""
    found = []
    for path in product_modules():
        found += findings_in(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))
    for path in participant_templates():
        found += template_findings(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))
    return found
