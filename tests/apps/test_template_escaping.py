"""oTree 6's templates print ``{{ x }}`` as it is (no autoescape): every output of every template of the project is
``|escape``d, or is one of the deliberate raw outputs of `RAW`, each with its reason. A raw output added to a template
fails here; the scan reads the templates with oTree's own lexer and its list of tags, so a tag (``{{ next_button }}``,
``{{ formfield_errors 'x' }}``, ``{% block %}``) is never taken for an output, and an output is never taken for a tag.

What lands on a page is checked in tests/browser/test_escaping.py (a researcher's words formatted into a participant's
text, shown as text).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import PROJECT_ROOT
from lab_server import otree_internals

# Not oTree templates: the docs' site (mkdocs output), the docs' own files, the tests' packages.
NOT_TEMPLATES = {"site", "docs", "tests", "node_modules"}
# Filters that may follow |escape: oTree's |linebreaks is a no-op shim (the text stays escaped).
AFTER_ESCAPE = {"linebreaks"}

NUMBER = (
    "a number (int, float, Currency: |escape fails on it) or a text our code formats from numbers alone (0.1 – 0.4)"
)
OURS_MARKUP = "markup oTree or our own code builds"
SCRIPT_JSON = "JSON made script-safe by backend.core.script_json (<, >, & as \\u escapes: `</script>` cannot end it)"
SVG = "an SVG of backend.core.figures.inline_svg: matplotlib draws labels as outlines, the aria-label is escaped"
ROWS_HTML = "social_eval/rating_rows.html rendered by views.rows_html: that template escapes every value itself"

# (template, output expression) -> why it is printed raw. Keep it short: a text belongs in |escape, not here.
RAW = {
    # oTree's own frame (copies of oTree's templates we keep as shipped)
    ("_templates/global/Page.html", "super()"): f"{OURS_MARKUP}: the parent template's block",
    ("_templates/otree/Session.html", "super()"): f"{OURS_MARKUP}: the parent template's block",
    ("_templates/global/Page.html", "progress.done"): NUMBER,
    ("_templates/global/Page.html", "progress.total"): NUMBER,
    ("_templates/global/Page.html", "progress.percent"): NUMBER,
    ("_templates/global/Completion.html", "redirect_seconds"): NUMBER,
    ("_templates/global/Figures.html", "figure.svg"): SVG,
    ("dond/admin_transcripts.html", "game.pareto_svg"): SVG,
    ("social_eval/Rate.html", "block.rows_html"): ROWS_HTML,
    ("bias_tests/admin_report.html", "chart_json"): SCRIPT_JSON,
    ("dond/admin_report.html", "outcomes_json"): SCRIPT_JSON,
    ("social_eval/admin_report.html", "chart_json"): SCRIPT_JSON,
    ("social_eval/admin_report.html", "downloads_json"): SCRIPT_JSON,
    ("payoff_reasoning_eval/admin_report.html", "protocol_csv_json"): SCRIPT_JSON,
    ("payoff_reasoning_eval/admin_report.html", "downloads_json"): SCRIPT_JSON,
    ("payoff_reasoning_eval/admin_report.html", "download_name_json"): SCRIPT_JSON,
}
# Numbers, per template: counts, points, rates and statistics the app computes (never a text from outside).
NUMBERS = {
    "_templates/admin/PayAndReview.html": "bonus_lines|length total row.bonus",
    "_templates/admin/StudyLinks.html": "free_places",
    "_templates/admin/StudyStatus.html": (
        "count.n n_tests n_handed_back n_unconsented model_costs.in_flight model_costs.refused admission.max_in_flight"
        " admission.max_busy_percent admission.busy_percent admission.target_ms admission.page_ms admission.waiting"
        " admission.admitted_after_waiting admission.longest_wait_s row.percent"
    ),
    "bias_tests/Arguments.html": "forloop.counter0",
    "bias_tests/Choice.html": "option.index",
    "bias_tests/admin_report.html": "n_tests_left_out",
    "dond/Instructions.html": "heartbeat_ms",
    "dond/Results.html": (
        "row.count row.mine row.theirs proposals.worth_mine proposals.worth_theirs my_points other_points main_score"
        " bonus"
    ),
    "dond/items_table.html": "row.count row.value row.other_value",
    "dond/admin_report.html": (
        "n_games n_test_games row.games row.aborted_rate row.llm_error_rate row.llm_invalid_rate row.lose_rate"
        " row.success_rate row.pareto_optimal_rate row.main_score row.ci row.main_score_debiased row.benchmark_score"
        " row.n row.n_cells row.mean row.debiased_mean row.se row.difference row.instances row.dropped game.cell"
        " game.points_a game.points_b game.main_score game.violations_a game.violations_b game.llm_errors_a"
        " game.llm_errors_b"
    ),
    "dond/admin_transcripts.html": "n_games item.count item.value_a item.value_b",
    "payoff_reasoning_eval/Judge.html": "choice.value",
    "payoff_reasoning_eval/admin_report.html": (
        "ratings_done logs|length ratings_needed judges_per_log n_tests_left_out q.n_items q.median_seconds"
        " q.fast_items q.shared_units q.mean_abs_diff q.correlation quality_floor_s log.done log.reserved log.missing"
    ),
    "social_eval/Comprehension.html": "q.number o.value",
    "social_eval/Instructions.html": "r.rating",
    "social_eval/Rate.html": "a.index t_.agent_index t_.number block.agent_index",
    "social_eval/dimension_help.html": "e.rating",
    "social_eval/rating_rows.html": "min_reasoning_chars row.min row.max c.value e.rating",
    "social_eval/admin_report.html": (
        "n_pilot live_reservations n_annotators n_regular n_gold k complete n_tests_left_out c.ratings c.episodes"
        " n_qualified n_attention q.n_items q.median_seconds q.fast_items q.shared_units q.mean_abs_diff"
        " q.correlation quality_floor_s r.n_items r.n_ratings r.mean r.sd r.alpha r.exact r.within_1 r.model_mean"
        " r.pearson r.spearman r.diff"
    ),
}
for _template, _names in NUMBERS.items():
    RAW.update({(_template, name): NUMBER for name in _names.split()})


def templates() -> list[Path]:
    """Every .html template of the project: the apps', _templates/ (global, admin, oTree's overridden) and bench/."""
    found = []
    for path in sorted(PROJECT_ROOT.rglob("*.html")):
        parts = path.relative_to(PROJECT_ROOT).parts
        if parts[0] in NOT_TEMPLATES or any(part.startswith(".") or part == "node_modules" for part in parts):
            continue
        found.append(path)
    return found


def outputs(text: str, template_id: str = "x.html"):
    """``(line, expression)`` of every output of a template: each branch of ``a ?? b :: c``, each of ``a or b``.

    >>> list(outputs("{% if x %}{{ a|escape }}{% endif %}{{ next_button }}{{ n ?? b :: c|escape }}"))
    [(1, 'a|escape'), (1, 'b'), (1, 'c|escape')]
    """
    for token in otree_internals.template_lexer(text, template_id).tokenize():
        if token.type != "INSTRUCTION":
            continue
        if token.keyword in otree_internals.template_tags or token.keyword in otree_internals.template_end_tags:
            continue
        chunks = otree_internals.template_split_branches(token.text, (r"\?\?", r"\:\:"), True)
        if len(chunks) == 5 and chunks[1] == "??" and chunks[3] == "::":
            branches = [chunks[2], chunks[4]]
        else:
            branches = otree_internals.template_split_branches(token.text, (r"\s+or\s+", r"\|\|"))
        for branch in branches:
            yield token.line_number, re.sub(r"\s+", " ", branch.strip())


def escaped(expression: str) -> bool:
    """Whether the expression's last filters are ``|escape`` (quotes too: ``|escape(False)`` would leave an attribute
    open) and then only filters that keep it escaped."""
    filters = [part.replace(" ", "") for part in otree_internals.template_split(expression, "|", strip=True)[1:]]
    while filters and filters[-1] in AFTER_ESCAPE:
        filters.pop()
    return bool(filters) and filters[-1] == "escape"


def findings_in(relative: str, text: str) -> list[str]:
    """The raw outputs of one template that `RAW` does not allow."""
    return [
        f"{relative}:{line}: {{{{ {expression} }}}}"
        for line, expression in outputs(text, relative)
        if not escaped(expression) and (relative, expression) not in RAW
    ]


def test_every_output_of_every_template_is_escaped_or_allowed_raw_with_its_reason():
    found = []
    scanned = templates()
    for path in scanned:
        found += findings_in(path.relative_to(PROJECT_ROOT).as_posix(), path.read_text(encoding="utf-8"))
    assert len(scanned) > 40 and found == [], "\n".join(found)


def test_every_allowed_raw_output_is_still_in_its_template():
    """A stale entry would let the same expression come back raw unnoticed once the reason no longer holds."""
    present = set()
    for path in templates():
        relative = path.relative_to(PROJECT_ROOT).as_posix()
        present |= {(relative, expression) for _, expression in outputs(path.read_text(encoding="utf-8"), relative)}
    assert sorted(set(RAW) - present) == []


@pytest.mark.parametrize(
    "relative, before, after",
    [
        ("dond/Instructions.html", "{{ text.instructions_title|escape }}", "{{ text.instructions_title }}"),
        ("_templates/global/Consent.html", "study_text.welcome_title|escape }}", "study_text.welcome_title }}"),
        ("social_eval/Rate.html", "{{ episode.scenario|escape }}", "{{ episode.scenario }}"),
        ("dond/admin_report.html", "{{ row.model|escape }}", "{{ row.model|escape|truncate_(9) }}"),
        ("dond/admin_report.html", "{{ row.model|escape }}", "{{ row.model|escape(False) }}"),
        ("dond/Results.html", "{{ my_points }}", "{{ my_points }} {% raw_text %}"),
        ("bias_tests/Choice.html", '{{ option.index }}"', '{{ option.index }}"{{ option.label }}'),
    ],
)
def test_the_scan_finds_a_raw_output_added_to_a_template(relative, before, after):
    text = (PROJECT_ROOT / relative).read_text(encoding="utf-8")
    assert before in text and findings_in(relative, text) == []
    assert findings_in(relative, text.replace(before, after, 1)) != []


MARKUP = "<img src=x onerror=alert(1)></script><script>alert(2)</script>--> l'offerta & co"


def test_the_raw_producers_carry_no_markup_of_the_words_they_are_given():
    """What `RAW` prints as it is: the JSON of a script (script_json) and an SVG figure (inline_svg) given a label
    with markup; neither holds a tag or a ``</script>`` of it (the SVG's one text, its aria-label, is escaped)."""
    from backend.core.figures import FigureSpec, forest, inline_svg
    from backend.core.script_json import script_json

    assert "<" not in script_json({"label": MARKUP, "values": [MARKUP]})

    def draw(figure, data):
        forest(figure.subplots(), [MARKUP, "b"], [0.1, 0.2], [0.0, 0.1], [0.2, 0.3], xlabel=MARKUP)

    svg = inline_svg(FigureSpec("escaping", MARKUP, {"label": MARKUP}, draw))
    assert not re.search(r"<(img|script|a|iframe|foreignObject)\b", svg) and "onerror" not in svg.replace(
        'aria-label="&lt;img src=x onerror', ""
    )
    assert 'aria-label="&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;' in svg


def test_escape_prints_any_value_as_a_raw_output_would_and_never_fails_the_page():
    # oTree's own |escape raises on None or a number (html.escape needs text), which fails the whole page with a
    # TemplateRenderingError; the installed filter prints them as a raw output does, then escapes. Run in a process
    # of its own: install() changes oTree for the process.
    script = (
        "import lab_server; lab_server.install(); from lab_server import otree_internals as o\n"
        "page = o.template_class('{{ a|escape }}|{{ b|escape }}|{{ c|escape }}|{{ d|escape }}|{{ e|escape(False) }}')\n"
        'print(page.render(a=None, b=3, c=0.5, d="<b>l\'x & y</b>", e="\'"))\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "None|3|0.5|&lt;b&gt;l&#x27;x &amp; y&lt;/b&gt;|'"
