"""The data card of a release: a Hugging Face dataset card (``README.md`` with YAML front matter) written from the
released tables themselves, so every count in it is the data's.

Front matter: ``pretty_name``, ``license``, ``language`` (the ``language`` cells, else ``en``), ``task_categories``
(by record kind), ``tags``, ``size_categories`` (from the largest table), ``annotations_creators``
(``crowdsourced`` when people took part, ``machine-generated`` when models did), ``configs`` (one per table, its
Parquet file as the ``train`` split) and ``dataset_info`` (each table's features with their dtypes and its row
count). The body: what was collected, how many people and models, the conditions, a codebook of every column and
the figures.

Column meanings and units are the codebook the caller passes (``codebook``: the project's is
``backend.codebook.release_columns``, through ``backend.core.release.column_definition``: the columns of the export
each table came from, and the columns the release adds); a researcher's ``descriptions`` (column name → text, or
``(kind, column)`` → text for a kind-specific meaning) override them column by column. A column neither defines reads
`NOT_DESCRIBED`. Types are the data's.

>>> from types import SimpleNamespace
>>> rating = SimpleNamespace(matches=lambda name: name == "rating", unit="", meaning="The annotator's rating.")
>>> book = lambda kind: [rating] if kind == "ratings" else []
>>> describe("rating", "ratings", {}, codebook=book), describe("rating", "ratings", {"rating": "1-7 Likert"})
("The annotator's rating.", '1-7 Likert')
>>> describe("participant_a", "games", {"participant_a": "The person in role A."})
'The person in role A; keyed pseudonym (P-…, HMAC-SHA256), not the original ID'
>>> describe("my_notes", "games", {}, codebook=book)
'(not described yet)'

>>> size_category(999), size_category(1000), size_category(2_000_000)
('n<1K', '1K<n<10K', '1M<n<10M')
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from backend.core.paper_tables import markdown_escape
from backend.core.release import (
    FREE_TEXT_RULES,
    IDENTIFIER_KINDS,
    PSEUDONYM_NOTE,
    Table,
    column_definition,
    identifier_kind,
    is_free_text,
)

TASKS = {  # Hugging Face task categories per record kind
    "games": ["text-generation"],
    "events": ["text-generation"],
    "ratings": ["text-classification"],
    "judgements": ["text-classification"],
    "bias_answers": ["question-answering"],
    "model_calls": ["text-generation"],
}
KIND_TITLES = {
    "games": "one row per Deal or No Deal game (outcome, points, scores, condition)",
    "events": "one row per event of a Deal or No Deal game (messages, proposals, model calls)",
    "ratings": "one row per rating of a social-interaction episode (annotation × agent × dimension)",
    "judgements": "one row per judge's verdict on a payoff-reasoning log",
    "bias_answers": "one row per answer to a cognitive-bias test version (people and models)",
    "model_calls": "one row per model call of an annotation or judging run",
}
MODEL_COLUMNS = ("model", "model_a", "model_b", "agent_model", "model_rater")
CONDITION_COLUMNS = (
    "mode",
    "language",
    "value_visibility",
    "agent_description",
    "disclose_description",
    "opponent_intro",
    "episode_group",
    "item_set",
    "version",
    "game",
)
NOT_DESCRIBED = "(not described yet)"
Codebook = Callable[[str], Iterable] | None  # kind -> its described columns (backend.core.release.column_definition)
# Who played or rated without being a model (a DoND game of two people has model "human"): not counted as a model.
NOT_MODELS = {"human"}
YAML_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def size_category(rows: int) -> str:
    """Hugging Face's size category of a dataset with ``rows`` rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    bounds += [(10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")]
    return next((label for bound, label in bounds if rows < bound), "n>100M")


def dtype_name(series: pd.Series) -> str:
    """The Hugging Face feature dtype of a released column.

    >>> [dtype_name(pd.Series(v, dtype=t)) for v, t in (([1], "Int64"), ([1.5], "float64"), ([True], "boolean"))]
    ['int64', 'float64', 'bool']
    """
    kind = str(series.dtype)
    return {"Int64": "int64", "float64": "float64", "boolean": "bool"}.get(kind, "string")


def describe(column: str, kind: str, descriptions: Mapping[Any, str], *, codebook: Codebook = None) -> str:
    """A released column's meaning: the researcher's ``descriptions`` (kind-specific first), else the codebook's or
    the release's own (``column_definition``), with what the release made of an identifier (its pseudonym)."""
    defined = column_definition(kind, column, codebook=codebook)
    text = descriptions.get((kind, column)) or descriptions.get(column) or (defined[1] if defined else "")
    if identifier_kind(column) is not None:
        note = PSEUDONYM_NOTE.format(prefix=IDENTIFIER_KINDS[identifier_kind(column)])
        text = (text.rstrip(".") + "; " if text else "") + note
    return text or NOT_DESCRIBED


def unit_of(column: str, kind: str, *, codebook: Codebook = None) -> str:
    """A released column's unit from the codebook ("" where it has none or the column is not defined).

    >>> from types import SimpleNamespace
    >>> spent = SimpleNamespace(matches=lambda name: name == "seconds_spent", unit="seconds", meaning="")
    >>> unit_of("seconds_spent", "ratings", codebook=lambda kind: [spent]), unit_of("game_id", "games")
    ('seconds', '')
    """
    defined = column_definition(kind, column, codebook=codebook)
    return defined[0] if defined else ""


def study_counts(tables: Mapping[str, Table]) -> dict[str, Any]:
    """People (distinct participant pseudonyms), models, conditions and rows, counted in the released tables."""
    people, models, conditions = set(), set(), {}
    for table in tables.values():
        frame = table.frame
        for column in frame.columns:
            values = {str(v) for v in frame[column].dropna().unique() if str(v) != ""}
            if identifier_kind(column) == "participant":
                people |= {v for v in values if v.startswith("P-")}
            if column in MODEL_COLUMNS:
                models |= {value for value in values if value.strip().lower() not in NOT_MODELS}
            if column in CONDITION_COLUMNS and column in frame:
                conditions.setdefault(column, set()).update(values)
    return {
        "people": len(people),
        "models": sorted(models),
        "conditions": {column: sorted(values) for column, values in conditions.items()},
        "rows": {kind: len(table.frame) for kind, table in tables.items()},
    }


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """A small YAML writer for the front matter: dicts, lists and scalars (strings as JSON strings)."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines += [f"{pad}{key}:", *_yaml(item, indent + 2)]
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return lines
    lines = []
    for item in value:
        if isinstance(item, dict):
            inner = _yaml(item, indent + 2)
            lines += [f"{pad}- {inner[0].lstrip()}", *inner[1:]]
        else:
            lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    r"""A YAML scalar; a string as a JSON string with every character YAML does not print (DEL, C1 controls, the
    Unicode line and paragraph separators) escaped too, so a researcher's name never breaks the front matter.

    >>> print(_scalar('a "b"\x7f\u2028ü'), _scalar(2), _scalar(True))
    "a \"b\"\u007f\u2028ü" 2 true
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    return YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(str(value), ensure_ascii=False))


def front_matter(tables: Mapping[str, Table], *, pretty_name: str, license: str) -> dict[str, Any]:
    """The card's YAML metadata (see the module docstring)."""
    counts = study_counts(tables)
    languages = counts["conditions"].get("language") or ["en"]
    creators = (["crowdsourced"] if counts["people"] else []) + (["machine-generated"] if counts["models"] else [])
    return {
        "pretty_name": pretty_name,
        "license": license,
        "language": languages,
        "task_categories": sorted({task for kind in tables for task in TASKS.get(kind, [])}),
        "tags": ["negotiation", "annotation", "llm-evaluation", "human-vs-model", "pseudonymised"],
        "size_categories": [size_category(max(counts["rows"].values(), default=0))],
        "annotations_creators": creators or ["found"],
        "source_datasets": ["original"],
        "configs": [
            {"config_name": kind, "data_files": [{"split": "train", "path": f"data/{kind}.parquet"}]} for kind in tables
        ],
        "dataset_info": [
            {
                "config_name": kind,
                "features": [{"name": column, "dtype": dtype_name(table.frame[column])} for column in table.frame],
                "splits": [{"name": "train", "num_examples": len(table.frame)}],
            }
            for kind, table in tables.items()
        ],
    }


def codebook_row(
    column: str, table: Table, descriptions: Mapping[Any, str], *, free_text: str, codebook: Codebook = None
) -> str:
    """One row of the card's codebook: the column, its dtype, unit, non-empty cells and meaning (free text marked
    with what the release did to it)."""
    meaning = describe(column, table.kind, descriptions, codebook=codebook)
    if is_free_text(column):
        meaning += f" (free text: {FREE_TEXT_RULES[free_text]})"
    cells = table.frame[column]
    parts = [
        markdown_escape(column, code=True),
        dtype_name(cells),
        markdown_escape(unit_of(column, table.kind, codebook=codebook)),
    ]
    return "| " + " | ".join([*parts, str(int(cells.notna().sum())), markdown_escape(meaning)]) + " |"


def data_card(
    tables: Mapping[str, Table],
    *,
    pretty_name: str,
    license: str,
    descriptions: Mapping[Any, str] | None = None,
    figures: Sequence[str] = (),
    figure_notes: Sequence[str] = (),
    free_text: str = "mask",
    codebook: Codebook = None,
) -> str:
    """The ``README.md`` of a release (front matter and body); ``codebook``: the column meanings
    (``backend.core.release.column_definition``)."""
    descriptions = descriptions or {}
    counts = study_counts(tables)
    meta = front_matter(tables, pretty_name=pretty_name, license=license)
    text_rule = FREE_TEXT_RULES[free_text]
    models = ", ".join(map(markdown_escape, counts["models"]))
    lines = ["---", *_yaml(meta), "---", "", f"# {markdown_escape(pretty_name)}", "", "## What was collected", ""]
    lines += [
        f"- `{kind}`: {len(t.frame)} rows, {KIND_TITLES[kind]} (from {', '.join(map(markdown_escape, t.sources))})"
        for kind, t in tables.items()
    ]
    lines += [
        "",
        f"People: {counts['people']} (distinct participant pseudonyms). "
        f"Models: {len(counts['models'])}" + (f" ({models})." if counts["models"] else "."),
        "",
        "Rows of test and demo sessions (`is_test`) are left out: "
        + ", ".join(f"{t.dropped_test_rows} from `{kind}`" for kind, t in tables.items())
        + ".",
        "",
        "## Conditions",
        "",
        *[
            f"- `{column}`: {', '.join(map(markdown_escape, values))}"
            for column, values in counts["conditions"].items()
        ],
        "",
        "## Privacy",
        "",
        "Prolific IDs, participant codes, study, session and Prolific-session IDs are replaced by keyed pseudonyms "
        "(HMAC-SHA256 with a key kept by the lab, not in this bundle); the same person has the same pseudonym in "
        f"every table. Free text is {text_rule}.",
        "",
        "## Loading",
        "",
        "```python",
        "import pandas as pd",
        f'frame = pd.read_parquet("data/{next(iter(tables), "games")}.parquet")',
        '# or: datasets.load_dataset("parquet", data_files=...) / the configs above',
        "```",
        "",
        "## Codebook",
    ]
    for kind, table in tables.items():
        lines += ["", f"### `{kind}`", "", "| column | type | unit | non-empty | meaning |", "|---|---|---|---|---|"]
        lines += [
            codebook_row(column, table, descriptions, free_text=free_text, codebook=codebook)
            for column in table.frame.columns
        ]
    if figures or figure_notes:
        lines += ["", "## Figures", "", *[f"- {markdown_escape(note)}" for note in figure_notes]]
        lines += [f"![{markdown_escape(name.rsplit('/', 1)[-1].rsplit('.', 1)[0])}]({name})" for name in figures]
    lines += ["", "## Provenance", "", "See `manifest.json`: product version, input files with SHA-256, options."]
    return "\n".join(lines) + "\n"
