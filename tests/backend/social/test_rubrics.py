"""The rubric data file and its loader: the seven Sotopia dimensions, validation errors naming file and field."""

from __future__ import annotations

import json

import pytest

from backend.social.rubrics import DEFAULT_RUBRIC_PATH, RubricError, load_rubric, overall_score, rubric_from_dict
from tests.support.json_edits import edited

# The ranges stated in the issue (and in Sotopia's evaluator); the data file must match them.
SOTOPIA_RANGES = {
    "believability": (0, 10),
    "relationship": (-5, 5),
    "knowledge": (0, 10),
    "secret": (-10, 0),
    "social_rules": (-10, 0),
    "financial_and_material_benefits": (-5, 5),
    "goal": (0, 10),
}


@pytest.fixture
def raw() -> dict:
    return json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))


def test_bundled_rubric_has_the_seven_dimensions_with_their_ranges():
    rubric = load_rubric()
    assert {d.key: (d.min, d.max) for d in rubric.dimensions} == SOTOPIA_RANGES
    assert rubric.keys == list(SOTOPIA_RANGES)


def test_every_dimension_teaches_with_good_and_bad_examples():
    for dimension in load_rubric().dimensions:
        kinds = {example.is_good for example in dimension.examples}
        assert kinds == {True, False}, f"{dimension.key} needs a good and a bad annotation example"
        assert dimension.definition and all(example.why for example in dimension.examples)


def test_negative_scales_list_both_ends_and_show_a_minus_sign():
    relationship = load_rubric().dimension("relationship")
    assert relationship.choices[0] == -5 and relationship.choices[-1] == 5 and len(relationship.choices) == 11
    assert relationship.range_text == "−5 to 5"
    secret = load_rubric().dimension("secret")
    assert secret.choices == list(range(-10, 1))
    assert not secret.contains(1) and secret.contains(-10)


def test_as_dict_round_trips(raw):
    rubric = load_rubric()
    again = rubric_from_dict(rubric.as_dict(), source=rubric.source)
    assert again == rubric
    assert json.loads(json.dumps(rubric.as_dict())) == rubric.as_dict()


def test_comprehension_answers_point_at_an_option():
    rubric = load_rubric()
    assert rubric.comprehension
    for question in rubric.comprehension:
        assert 0 <= question.answer < len(question.options)


def test_worked_example_rates_both_agents_on_every_dimension():
    worked = load_rubric().worked_example
    assert worked is not None and len(worked["ratings"]) == 2
    for ratings in worked["ratings"]:
        assert set(ratings) == set(SOTOPIA_RANGES)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["dimensions", 1, "min"], 5, "dimensions[1].min: must be smaller than max (5), got 5."),
        (["dimensions", 1, "max"], -6, "dimensions[1].min: must be smaller than max (-6), got -5."),
        (["dimensions", 0, "label"], KeyError, "dimensions[0].label: is missing."),
        (["dimensions", 0, "key"], "Believability!", "dimensions[0].key: must be snake_case"),
        (["dimensions", 2, "key"], "believability", "keys must be unique, but ['believability']"),
        (["dimensions", 3, "examples", 0, "rating"], 4, "dimensions[3].examples[0].rating: must lie within"),
        (["dimensions", 3, "examples", 0, "rating"], 1.5, "dimensions[3].examples[0].rating: must be a whole number"),
        (
            ["dimensions", 0, "examples", 0, "is_good"],
            "yes",
            "dimensions[0].examples[0].is_good: must be true or false",
        ),
        (["dimensions"], [], "dimensions: must be a list with at least 1 entries"),
        (["comprehension", 0, "answer"], 3, "comprehension[0].answer: must be the 0-based position"),
        (["worked_example", "ratings", 0, "secret", "rating"], 2, "worked_example.ratings[0].secret.rating"),
        (["worked_example", "turns", 0, "speaker"], "Nobody", "worked_example.turns[0].speaker: must be one of"),
        (["title"], KeyError, "title: is missing."),
    ],
)
def test_malformed_rubrics_name_the_file_and_field(raw, path, value, message):
    with pytest.raises(RubricError) as error:
        rubric_from_dict(edited(raw, path, value), source="researcher.json")
    assert str(error.value).startswith("researcher.json: ")
    assert message in str(error.value)


def test_a_researchers_own_file_can_replace_the_default(tmp_path):
    own = {
        "name": "two-scales",
        "title": "Politeness and clarity",
        "instructions": ["Rate each speaker."],
        "dimensions": [
            {"key": "politeness", "label": "Politeness", "min": -3, "max": 3, "definition": "How polite?"},
            {"key": "clarity", "label": "Clarity", "min": 1, "max": 7, "definition": "How clear?"},
        ],
    }
    path = tmp_path / "own_rubric.json"
    path.write_text(json.dumps(own), encoding="utf-8")
    rubric = load_rubric(path)
    assert rubric.keys == ["politeness", "clarity"]
    assert rubric.dimension("clarity").choices == list(range(1, 8))
    assert rubric.worked_example is None and rubric.comprehension == ()


def test_unreadable_files_are_reported_by_name(tmp_path):
    with pytest.raises(RubricError, match=r"missing.json was not found \(looked for .*missing.json\)"):
        load_rubric(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n "title": }', encoding="utf-8")
    with pytest.raises(RubricError, match=r"broken.json is not valid JSON: line 2, column 11"):
        load_rubric(broken)
    latin = tmp_path / "latin.json"
    latin.write_bytes(json.dumps({"name": "Fran\u00e7ais"}, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(RubricError, match=r"rubric_file 'latin.json' is not UTF-8 text: byte 0xe7 at line 1"):
        load_rubric(latin, what="rubric_file 'latin.json'")


def test_a_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "windows.json"
    path.write_bytes(b"\xef\xbb\xbf" + DEFAULT_RUBRIC_PATH.read_bytes())
    assert load_rubric(path).keys == load_rubric().keys


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (0, 1e300, "dimensions[0].max: must be a whole number from -1000 to 1000, got 10000000... (301 digits)."),
        (0, 10**400, "dimensions[0].max: must be a whole number from -1000 to 1000, got 10000000... (401 digits)."),
        (0, 200000, "dimensions[0].max: must be a whole number from -1000 to 1000, got 200000."),
        (-1e300, 0, "dimensions[0].min: must be a whole number from -1000 to 1000"),
        (0, 21, "dimensions[0].max: the scale 0..21 has 22 points, but a rating scale may have at most 21"),
        (-11, 10, "dimensions[0].max: the scale -11..10 has 22 points"),
    ],
    ids=["1e300", "400-digit", "200000", "min-1e300", "22-points", "22-points-negative"],
)
def test_scales_a_rating_page_cannot_show_are_refused(raw, low, high, message):
    # "max": 1e300 gave every participant HTTP 500 mid-study, "max": 200000 a 66 MB rating page.
    data = edited(raw, ["dimensions", 0, "min"], low)
    data["dimensions"][0]["max"] = high
    with pytest.raises(RubricError) as error:
        rubric_from_dict(data, source="wide.json")
    assert str(error.value).startswith(f"wide.json: {message}")


def test_the_widest_allowed_scale_is_accepted(raw):
    data = edited(raw, ["dimensions", 0, "min"], -10)
    data["dimensions"][0]["max"] = 10
    assert rubric_from_dict(data).dimensions[0].choices == list(range(-10, 11))


def test_a_question_with_too_many_options_is_refused(raw):
    data = edited(raw, ["comprehension", 0, "options"], [f"option {n}" for n in range(11)])
    data["comprehension"][0]["answer"] = 0
    with pytest.raises(RubricError, match=r"comprehension\[0\].options: may hold at most 10 options, got 11"):
        rubric_from_dict(data)


def test_overall_score_is_the_mean_of_all_dimensions():
    rubric = load_rubric()
    ratings = dict.fromkeys(rubric.keys, 0)
    ratings.update(believability=7, goal=7)  # (7 + 7) / 7 = 2
    assert overall_score(ratings, rubric) == 2.0
    del ratings["goal"]
    with pytest.raises(ValueError, match=r"\['goal'\] are missing"):
        overall_score(ratings, rubric)
