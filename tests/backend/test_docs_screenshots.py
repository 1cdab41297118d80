"""The documentation's pictures are true: every picture a page of the docs names exists, none shows an error or a
blank page, and each is the one ``docs/screenshots.py`` took and recorded (``docs/screenshots/pages.json``: the
page's URL, status, title and opening words, the picture's SHA-256).

``tests/system/test_screenshot_pages.py`` asks a live server for every URL the record holds (the pages have not moved
since the pictures were taken). Remake the pictures with ``.venv/bin/python docs/screenshots.py``.
"""

from __future__ import annotations

import doctest

import pytest
from PIL import Image

from tests.support.screenshots import blank_share, named_pictures, shots

# A picture whose most common colour covers more than this share of it shows nothing: the "Not Found" pictures the
# docs once showed were 99.97% (desktop) and 99.91% (phone) white; the emptiest real page, the "Thank you!" page on a
# desktop, is 99.58% white.
MOST_OF_ONE_COLOUR = 0.998


def test_the_docs_name_pictures_and_each_exists():
    named = named_pictures()
    assert len(named) >= 5, named  # the README's and the apps' pages show some: the search still finds them
    missing = {name: pages for name, pages in named.items() if not (shots.OUT / name).is_file()}
    assert not missing, f"pictures the docs name but docs/screenshots/ lacks (run docs/screenshots.py): {missing}"


def test_a_missing_picture_is_found(tmp_path):
    (tmp_path / "docs" / "apps").mkdir(parents=True)
    (tmp_path / "README.md").write_text('<img src="docs/screenshots/dond-03-bargain-desktop.png">')
    (tmp_path / "docs" / "apps" / "x.md").write_text("![a](../screenshots/gone-01-page-phone.png)")
    assert named_pictures(tmp_path) == {
        "dond-03-bargain-desktop.png": ["README.md"],
        "gone-01-page-phone.png": ["docs/apps/x.md"],
    }


def test_every_picture_is_recorded_and_is_the_one_recorded():
    record = shots.read_record()
    pictures = {path.name for path in shots.OUT.glob("*.png")}
    assert pictures - set(record) == set(), "pictures the script did not take (or took before it kept a record)"
    assert set(record) - pictures == set(), "recorded pictures that are gone"
    changed = sorted(name for name, entry in record.items() if shots.sha256(shots.OUT / name) != entry["sha256"])
    assert not changed, f"pictures changed since docs/screenshots.py took them: {changed}"


def test_every_picture_is_of_a_walk_the_script_makes():
    """Each picture is one of a set `docs/screenshots.py` makes by default (its SETS): running it remakes them all,
    and none is left over from a walk it no longer makes."""
    made = {
        path.name for language, apps in shots.SETS.items() for app in apps for path in shots.pictures_of(app, language)
    }
    assert {path.name for path in shots.OUT.glob("*.png")} - made == set()


def test_no_recorded_page_answered_an_error_or_was_blank():
    record = shots.read_record()
    assert record
    problems = {
        name: problem
        for name, entry in record.items()
        if (problem := shots.page_problem(entry["status"], entry["title"], entry["text"]))
    }
    assert not problems
    assert all(entry["url"].startswith("/") for entry in record.values())


def test_researcher_pages_are_photographed_for_every_app():
    record = shots.read_record()
    for language, apps in shots.SETS.items():
        for app in apps:
            urls = {record[path.name]["url"].split("/")[1] for path in shots.pictures_of(app, language)}
            assert {"StudyStatus", "AdminReport", "LaunchCheck", "PayAndReview"} <= urls, (app, language, urls)


def test_no_picture_is_blank():
    blank = {}
    for path in sorted(shots.OUT.glob("*.png")):
        share = blank_share(path)
        if share > MOST_OF_ONE_COLOUR:
            blank[path.name] = round(share, 4)
    assert not blank, f"pictures of (nearly) one colour: a blank or an error page: {blank}"


def test_a_not_found_page_is_blank_and_a_short_page_is_not(tmp_path):
    not_found, thanks = tmp_path / "not-found.png", tmp_path / "thanks.png"
    image = Image.new("RGB", (390, 844), "white")
    image.paste((0, 0, 0), (8, 8, 60, 14))  # the words "Not Found", as many dark pixels as they had
    image.save(not_found)
    image.paste((0, 0, 0), (30, 90, 300, 200))  # a heading and a sentence
    image.save(thanks)
    assert blank_share(not_found) > MOST_OF_ONE_COLOUR > blank_share(thanks)


def test_the_script_refuses_error_and_blank_pages():
    assert doctest.testmod(shots, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
    assert shots.page_problem(200, "Launch check | oTree Admin", "Not Found") is not None
    assert shots.page_problem(500, "Study status | oTree Admin", "Study status of everyone") is not None


@pytest.mark.parametrize("language", ["en", "de"])
def test_pictures_of_one_walk_are_told_apart(tmp_path, language):
    for name in ("dond-01-consent-desktop.png", "dond-01-consent-phone-de.png", "dond_x-01-a-phone.png"):
        (tmp_path / name).touch()
    found = [path.name for path in shots.pictures_of("dond", language, tmp_path)]
    assert found == {"en": ["dond-01-consent-desktop.png"], "de": ["dond-01-consent-phone-de.png"]}[language]
