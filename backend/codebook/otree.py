"""The columns of oTree's own exports: the wide export ("All apps", one row per participant) and each app's export
(one row per player and round), which oTree writes from the database without our codebook.

Their header is oTree's: ``participant.<field>`` (oTree's own fields, ``participant.is_test`` that lab_server.outputs
adds, and settings.PARTICIPANT_FIELDS, wide export only), ``session.<field>`` and ``session.config.<key>`` (every
session key, wide export only), and per app the fields of its models: ``<app>.<round>.player.<field>`` (and
``group.``, ``subsession.``) in the wide export, ``player.<field>`` in the app's export. An app field's entry is listed
once, per app (`MODEL_FIELDS`); the round stands as ``<round>``. tests/apps/test_otree_codebook.py reads every field
of every app's models (oTree's own list of exported fields) and fails on a field this module does not describe, or
describes with another type; tests/system/test_exports_columns.py fails on a column of a real wide export without an
entry. Pure: no oTree.

>>> wide_entry("social_eval.3.player.rating_1_2").meaning[:49]
'social_eval, one column per round: A rating slot:'
>>> wide_undescribed(["participant.code", "session.config.llm_model", "dond.1.player.points", "dond.1.player.nope"])
['dond.1.player.nope']
>>> app_undescribed("bias_tests", ["participant.code", "player.choice", "session.code"])
[]
"""

from __future__ import annotations

from .columns import Column

APPS = ("dond", "social_eval", "payoff_reasoning_eval", "bias_tests")
WIDE = "otree_wide"  # the export's name in the codebook table (`codebook_rows`)
PER_APP = "otree_app"

# oTree's own participant fields (otree.export, for the exports) and the mark lab_server.outputs adds beside the code.
PARTICIPANT = (
    Column("participant.id_in_session", "integer", "", "The participant's number in the session (1 = first place)."),
    Column("participant.code", "text", "", "oTree's code of the participant (the participant_code of our exports)."),
    Column(
        "participant.is_test",
        "0/1",
        "",
        "1 for test data (a demo session or a test link; study_flow.test_data.is_test). An export of all sessions "
        "leaves tests out; an export of one session keeps them, marked here. Empty for a code the database no "
        "longer has.",
    ),
    Column("participant.label", "text", "", "The room link's participant_label: the Prolific ID on a Prolific link."),
    Column("participant._is_bot", "0/1", "", "1 for one of oTree's bots (tests), 0 for a person."),
    Column("participant._index_in_pages", "integer", "pages", "oTree's index of the page the participant is on."),
    Column("participant._max_page_index", "integer", "pages", "oTree's number of pages of the whole session."),
    Column("participant._current_app_name", "text", "", "The app the participant is in now (or finished in)."),
    Column("participant._current_page_name", "text", "", "The page the participant is on now (or finished on)."),
    Column("participant.time_started_utc", "time", "UTC", "When the participant opened the start link (oTree)."),
    Column("participant.visited", "0/1", "", "1 once the start link was opened: the place is taken."),
    Column("participant.mturk_worker_id", "text", "", "oTree's MTurk field; not used here (always empty)."),
    Column("participant.mturk_assignment_id", "text", "", "oTree's MTurk field; not used here (always empty)."),
    Column(
        "participant.payoff",
        "number",
        "points",
        "oTree's payoff in points, summed over the apps' player.payoff. The bonus paid is the amount the "
        "participant's page stated (study_flow.pay; the bonus file and Pay and review), not this at today's rate.",
    ),
)

# settings.PARTICIPANT_FIELDS (participant.vars), in the wide export only.
PARTICIPANT_VARS = (
    Column("participant.prolific_pid", "text", "", "The Prolific ID the entry stored; empty for a link without one."),
    Column("participant.study_id", "text", "", "Prolific's STUDY_ID from the link; empty when it carried none."),
    Column(
        "participant.prolific_session_id",
        "text",
        "",
        "Prolific's SESSION_ID from the link; empty when it carried none.",
    ),
    Column(
        "participant.consent_given", "0/1", "", "1 when the participant agreed on the consent page, 0 when declined."
    ),
    Column("participant.screened_out", "0/1", "", "1 when screened out (declined consent, failed a check)."),
    Column(
        "participant.screenout_reason",
        "text",
        "",
        "Why: declined_consent, consent_not_given, comprehension_not_answered or failed_comprehension; empty "
        "otherwise.",
    ),
    Column("participant.completed", "0/1", "", "1 once the completion page was shown; empty before."),
    Column(
        "participant.progress_done",
        "integer",
        "items",
        "Items finished, as the progress bar counts them: episodes (social_eval), logs (payoff_reasoning_eval), "
        "tests (bias_tests). Empty in dond, which has no items (one game: see its games export), and for a "
        "participant who has not reached the first item.",
    ),
    Column(
        "participant.progress_total",
        "integer",
        "items",
        "The items planned for the participant (the progress bar's total); empty in dond, as progress_done.",
    ),
)

SESSION = (
    Column("session.code", "text", "", "The oTree session (the session_code of our exports)."),
    Column("session.label", "text", "", "The session's label, as the researcher typed it when creating it."),
    Column("session.mturk_HITId", "text", "", "oTree's MTurk field; not used here (always empty)."),
    Column("session.mturk_HITGroupId", "text", "", "oTree's MTurk field; not used here (always empty)."),
    Column("session.comment", "text", "", "The researcher's comment on the session (oTree's Sessions page)."),
    Column("session.is_demo", "0/1", "", "1 for a session made on oTree's demo page (test data)."),
    Column("session.config.name", "text", "", "The session config the session was made from (the config_name)."),
    Column(
        "session.config.<key>",
        "text",
        "",
        "One session key as the session was made (its type is the key's): each key's label and help are on the "
        "Create-session page and in the Session keys reference (docs/reference/session-keys.md). A text over 1,000 "
        "characters is written as a note of its length (the app keeps the text with the session).",
    ),
)

# oTree's bookkeeping of every round of every app.
ROUND = (
    Column("player.id_in_group", "integer", "", "oTree's number of the player in the group."),
    Column("player.role", "text", "", "oTree's role of the player; empty (the apps use no oTree roles)."),
    Column("player.payoff", "number", "points", "oTree's payoff of the round, in points."),
    Column("player.consent_given", "0/1", "", "Round 1: 1 when the participant agreed on the consent page."),
    Column("group.id_in_subsession", "integer", "", "oTree's number of the group in the round."),
    Column("subsession.round_number", "integer", "", "The round (1 = first)."),
)

_STORED_TIME = "Unix time in seconds (the wide export writes it as stored)."

# Each app's own model fields (player, group, subsession), as oTree exports them: "<model>.<field>".
MODEL_FIELDS: dict[str, tuple[Column, ...]] = {
    "dond": (
        Column("player.game_id", "integer", "", "The Game row of this person's game (0 = none yet)."),
        Column("player.game_role", "text", "", "The person's role in the game: A or B; empty before pairing."),
        Column(
            "player.is_unpaired", "0/1", "", "1 when no partner came in time and the person went on without a game."
        ),
        Column(
            "player.pairing_started_at",
            "number",
            "seconds",
            "When the person began waiting for a partner: " + _STORED_TIME,
        ),
        Column("player.last_seen", "number", "seconds", "The person's last sign of presence: " + _STORED_TIME),
        Column(
            "player.live_since",
            "number",
            "seconds",
            "When the Bargain page first connected, from when the person could act: " + _STORED_TIME,
        ),
        Column("player.outcome", "text", "", "How the game ended for this person (see the games export's outcome)."),
        Column("player.points", "integer", "points", "The person's points from the game."),
        Column("player.bonus_points", "number", "points", "The points the bonus is paid on (the game's goal)."),
    ),
    "social_eval": (
        Column("player.episode_id", "text", "", "The episode rated in this round; empty for a round not used."),
        Column("player.is_gold", "0/1", "", "1 when the round's episode is a gold (attention) episode."),
        Column("player.shown_at", "number", "seconds", "When the Rate page was first shown: " + _STORED_TIME),
        Column("player.submitted_at", "number", "seconds", "When the ratings were submitted: " + _STORED_TIME),
        Column("player.seconds_spent", "number", "seconds", "From showing the Rate page to submitting it."),
        Column(
            "player.step_seconds",
            "JSON",
            "seconds",
            "The browser's time per rating step, {rating field: seconds}, when plausible; else empty.",
        ),
        Column("player.step_times_ok", "0/1", "", "1 when the step timings were stored and plausible."),
        Column("player.attention_passed", "0/1", "", "On a gold episode: 1 when every rating was within tolerance."),
        Column(
            "player.gold_max_difference",
            "number",
            "scale points",
            "On a gold episode: the largest distance from a gold rating.",
        ),
        Column("player.comprehension_attempts", "integer", "attempts", "Round 1: tries at the comprehension check."),
        Column(
            "player.rating_<agent>_<slot>",
            "integer",
            "scale points",
            "A rating slot: the rating of agent 1 or 2 on the rubric's dimension number <slot> (the rubric names "
            "it; the ratings exports give it by name). Empty for slots the rubric does not use.",
        ),
        Column(
            "player.reason_<agent>_<slot>",
            "text",
            "",
            "The explanation of that rating, as typed (the ratings exports give it escaped, by dimension name).",
        ),
        Column("player.quiz_<n>", "integer", "", "Round 1: the answer (option index) to comprehension question n."),
    ),
    "payoff_reasoning_eval": (
        Column("player.log_file", "text", "", "The judged reasoning log (its file name); empty for a round not used."),
        Column("player.game", "text", "", "The 2x2 game the log is about, as the log names it."),
        Column("player.attempts", "integer", "attempts", "How many attempts (1-5) the log holds."),
        Column("player.orig_choice", "text", "", "The model's choice in its first attempt."),
        Column("player.final_choice", "text", "", "The model's choice in its last attempt."),
        Column("player.failed_queries", "text", "", "The automated check's failed queries of the first attempt."),
        Column(
            "player.orig_cor",
            "integer",
            "",
            "The judge's verdict: 1 when the first attempt reasoned correctly, else 0.",
        ),
        Column("player.fin_cor", "integer", "", "The judge's verdict on the last attempt: 1 correct, 0 not."),
        Column("player.err_type", "text", "", "The error types the judge found, codes joined by # (pa, rga, pc, ...)."),
        Column("player.marked_sentences", "text", "", "The ids of the sentences the judge clicked (e.g. f0#l2)."),
        Column("player.sentence", "text", "", "The faulty sentences the judge marked, joined by #."),
        Column("player.remarks", "text", "", "The judge's remarks, as typed."),
        Column("player.con_mat", "text", "", "The verdict against the automated check: TP, FP, TN or FN."),
    ),
    "bias_tests": (
        Column("player.item_id", "text", "", "The test (item) of this round; empty for a round not used."),
        Column(
            "player.bias",
            "text",
            "",
            "The bias tested: anchoring, halo, loss_aversion, confirmation or attention_check.",
        ),
        Column("player.version", "text", "", "Which version the person saw: control, treatment, or check."),
        Column(
            "player.arguments_shown",
            "text",
            "",
            "Confirmation tests: the argument ids in display order, comma-separated.",
        ),
        Column("player.choice", "integer", "", "The index of the chosen option as listed in the item file."),
        Column("player.answer", "number", "", "The value of the chosen option (1/0 for accept or agree)."),
        Column(
            "player.confidence", "integer", "slider points", "The confidence slider: 0 = pure guess, 100 = certain."
        ),
        Column(
            "player.selected_arguments", "text", "", "Confirmation tests: the argument ids chosen, comma-separated."
        ),
        Column("player.pro_selected", "integer", "arguments", "Confirmation tests: arguments for the stance chosen."),
        Column("player.con_selected", "integer", "arguments", "Confirmation tests: arguments against it chosen."),
        Column("player.is_correct", "0/1", "", "Attention check only: 1 when answered as instructed."),
        Column("player.seconds", "number", "seconds", "Time on the test's page."),
        Column("player.answered_at", "number", "seconds", "When the answer was stored: " + _STORED_TIME),
    ),
}


def model_columns(app: str) -> tuple[Column, ...]:
    """The entries of an app's model fields, oTree's round bookkeeping first, named ``<model>.<field>``."""
    return ROUND + MODEL_FIELDS.get(app, ())


def wide_columns(apps=APPS) -> tuple[Column, ...]:
    """Every entry of the wide export ("All apps"), in the order oTree writes the columns: participant, session, then
    each app's model fields under ``<app>.<round>.`` (of ``apps``)."""
    per_app = tuple(
        Column(
            f"{app}.<round>.{column.name}", column.type, column.unit, f"{app}, one column per round: {column.meaning}"
        )
        for app in apps
        for column in model_columns(app)
    )
    return PARTICIPANT + PARTICIPANT_VARS + SESSION + per_app


def app_export_columns(app: str) -> tuple[Column, ...]:
    """Every entry of one app's export (oTree's Data page, per app): participant, player, group, subsession, session."""
    session = tuple(column for column in SESSION if not column.name.startswith("session.config."))
    return PARTICIPANT + model_columns(app) + session


def _entry(columns, name: str) -> Column | None:
    exact = next((column for column in columns if column.name == name), None)
    return exact or next((column for column in columns if column.is_pattern and column.matches(name)), None)


def wide_entry(name: str) -> Column | None:
    """The codebook entry of a wide-export column, or None.

    >>> wide_entry("participant.progress_done").unit, wide_entry("bias_tests.12.player.choice").type
    ('items', 'integer')
    """
    return _entry(wide_columns(), name)


def wide_undescribed(header) -> list[str]:
    """The columns of a wide export's header without a codebook entry."""
    columns = wide_columns()
    return [str(name) for name in header if _entry(columns, str(name)) is None]


def app_undescribed(app: str, header) -> list[str]:
    """The columns of one app's export (oTree's, per app) without a codebook entry."""
    columns = app_export_columns(app)
    return [str(name) for name in header if _entry(columns, str(name)) is None]


def codebook_rows(app: str | None = None) -> list[list[str]]:
    """oTree's exports as rows of the codebook table (app, export, one_row_is, column, type, unit, meaning): the wide
    export's participant and session columns and the app's own, and the app's export; for every app, or one.

    >>> rows = codebook_rows("dond")
    >>> rows[0][:4], sorted({row[1] for row in rows})
    (['dond', 'otree_wide', 'one participant (all apps, rounds side by side)', 'participant.id_in_session'], ['otree_app', 'otree_wide'])
    """
    rows = []
    for name in APPS if app is None else (app,):
        rows += [
            [name, WIDE, "one participant (all apps, rounds side by side)", c.name, c.type, c.unit, c.meaning]
            for c in wide_columns((name,))
        ]
        rows += [
            [name, PER_APP, "one player in one round of the app", c.name, c.type, c.unit, c.meaning]
            for c in app_export_columns(name)
        ]
    return rows
