"""The gettext catalogues, checked without a server or a browser: every catalogue of de and it complete (no message
missing, fuzzy or untranslated, the English placeholders, no translation left in English), ``msgfmt --check`` clean,
the templates (``locale/<domain>.pot``) as the code says, no participant-facing text outside the catalogues, and a
language made of catalogues alone available with no Python change.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from backend.core import catalogue_tool, catalogues
from harness.servers import ensure_debian_package
from tests.support import text_scan
from tests.support.language_check import LANGUAGES, catalogue_table, load_texts, words
from tests.support.pseudo_language import write_pseudo_language

SHIPPED = tuple(language for language in LANGUAGES if language != "en")

# Translations that are rightly the English text: names, codes and words both languages use as they are.
SAME_AS_ENGLISH = frozenset(
    {
        "",
        "OK",
        "Prolific",
        "Prolific ID",
        "ID",
        "Chat",
        "Online",
        "Feedback",
        "Bonus",
        "Score",
        "Item",
        "Items",
        "Start",
        "Stop",
        "Total",
        "Team",
        "Test",
        "Demo",
        "Status",
        "Email",
        "E-mail",
        "Link",
        "Code",
        "Info",
        "Pareto",
        "Dimension",
    }
)


@pytest.mark.parametrize("language", SHIPPED)
@pytest.mark.parametrize("domain", catalogues.DOMAINS)
def test_every_catalogue_is_complete_with_the_english_placeholders(domain, language):
    assert catalogues.problems(domain, language) == []


@pytest.mark.parametrize("language", SHIPPED)
def test_no_translation_is_left_in_english(language):
    found = []
    for domain in catalogues.DOMAINS:
        english, translated = catalogue_table(domain, "en"), catalogue_table(domain, language)
        found += [
            f"{domain} ({language}): {key}: {text!r}"
            for key, text in translated.items()
            if text == english.get(key) and text not in SAME_AS_ENGLISH and words(str(text))
        ]
    assert not found, "\n".join(found)


def test_the_shipped_languages_are_english_german_and_italian():
    assert catalogues.languages() == ("en", "de", "it")


@pytest.mark.parametrize("language", SHIPPED)
@pytest.mark.parametrize("domain", catalogues.DOMAINS)
def test_msgfmt_checks_every_catalogue_and_counts_every_message_translated(domain, language, tmp_path):
    """GNU gettext's own check, as a translator's tool runs it (Debian's ``gettext``, installed when missing)."""
    ensure_debian_package("/usr/bin/msgfmt", "gettext")
    po = catalogues.po_path(domain, language)
    done = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", str(tmp_path / "x.mo"), str(po)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith(f"{len(catalogue_tool.extract(domain))} translated messages."), done.stderr


@pytest.mark.parametrize("domain", catalogues.DOMAINS)
def test_every_template_is_what_the_code_says(domain):
    """``python -m backend.core.catalogue_tool extract`` writes them; then ``update de`` / ``update it``."""
    assert catalogues.pot_path(domain).read_text(encoding="utf-8") == catalogue_tool.template_text(domain), (
        f"locale/{domain}.pot is out of date: run python -m backend.core.catalogue_tool extract"
    )


def _broken(tmp_path, old: str, new: str):
    po = catalogues.po_path("dond", "de")
    text = po.read_text(encoding="utf-8")
    assert old in text
    broken = tmp_path / "dond.po"
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    return catalogues.problems("dond", "de", po=broken)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ('msgctxt "bargain_title"\nmsgid "Negotiation"\nmsgstr "Verhandlung"\n', "", "bargain_title: missing"),
        ('msgstr "Verhandlung"\n', 'msgstr ""\n', "bargain_title: untranslated"),
        ('msgctxt "bargain_title"\n', '#, fuzzy\nmsgctxt "bargain_title"\n', "bargain_title: fuzzy"),
        ('msgstr "{n} / {max} Zeichen"', 'msgstr "{n} / {maxi} Zeichen"', "placeholders ['maxi', 'n']"),
        ('msgstr "{Other} hat eine', 'msgstr "Die Gegenseite hat eine', "placeholders []"),
    ],
)
def test_the_check_finds_a_missing_untranslated_fuzzy_or_misplaced_message(tmp_path, old, new, expected):
    found = _broken(tmp_path, old, new)
    assert any(expected in problem for problem in found), found


def test_a_stale_mo_is_compiled_again_and_a_fresh_one_is_kept(tmp_path):
    po = tmp_path / "de" / "LC_MESSAGES" / "bias_tests.po"
    po.parent.mkdir(parents=True)
    shutil.copy(catalogues.po_path("bias_tests", "de"), po)
    mo = catalogues.compile_po(po)
    first = mo.stat().st_mtime_ns
    assert catalogues.compile_po(po).stat().st_mtime_ns == first
    po.write_text(po.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    import os

    os.utime(po, ns=(first + 10**9, first + 10**9))
    assert catalogues.compile_po(po).stat().st_mtime_ns > first


def test_no_participant_text_is_outside_the_catalogues():
    assert text_scan.stray_texts() == []


@pytest.mark.parametrize(
    "relative, added, expected",
    [
        ("study_flow/texts.py", 'EXTRA = {"thanks": "Thank you for waiting."}\n', "texts: 'Thank you for waiting.'"),
        ("lab_server/limits.py", 'TEXT = {"en": "Please wait.", "de": "Bitte warten."}\n', "table: a table keyed by"),
        ("social_eval/views.py", 'HINT = "Please rate every character."\n', "sentence: 'Please rate every"),
    ],
)
def test_the_scan_finds_a_sentence_added_outside_the_catalogues(relative, added, expected):
    source = (catalogues.ROOT / relative).read_text(encoding="utf-8")
    assert text_scan.findings_in(relative, source) == []
    assert any(expected in finding for finding in text_scan.findings_in(relative, source + added))


def test_the_scan_finds_a_word_added_to_a_participant_template():
    path = catalogues.ROOT / "_templates" / "global" / "Completion.html"
    relative = path.relative_to(catalogues.ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    assert text_scan.template_findings(relative, text) == []
    assert text_scan.template_findings(relative, text.replace("</p>", " Thank you</p>", 1)) != []


def test_a_language_is_added_by_its_catalogues_alone(tmp_path, monkeypatch):
    """The pseudo-language ``xx`` (tests/support/pseudo_language.py) in a folder given by LAB_LOCALE_DIRS: it is
    available, and every text of every source table reads in it, none in English; one message fewer, and it is not."""
    monkeypatch.setenv(catalogues.LOCALE_DIRS_VARIABLE, str(write_pseudo_language(tmp_path / "complete")))
    assert catalogues.languages() == ("en", "de", "it", "xx")
    texts = load_texts("study_flow/texts.py")
    assert "xx" in texts.SHARED_LANGUAGES
    english = set().union(*(words(text) for text in texts.MESSAGES["en"].values()))
    for relative, name in [("study_flow/texts.py", "SOURCE"), ("bias_tests/texts.py", "SOURCE")]:
        table = catalogues.translated(getattr(load_texts(relative), name), "xx")
        assert all(not (words(text) & english) for text in table.values()), table
    monkeypatch.setenv(
        catalogues.LOCALE_DIRS_VARIABLE, str(write_pseudo_language(tmp_path / "one_short", skip=("dond", "send")))
    )
    assert catalogues.languages() == ("en", "de", "it")
