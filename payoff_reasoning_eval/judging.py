"""The Judge page's data: the form in the session's language, the judge's draft, and what a refused verdict must fix.

A verdict is checked twice: ``problems`` names, field by field and in the judge's language, every rule a judge can
break on the page (texts.py); ``backend.reasoning.task.check_verdict`` stays the final word (it also refuses what
only a tampered form sends: unknown sentence ids or error types, verdicts other than 0/1).
"""

from __future__ import annotations

import html

from backend.core.stored_text import typed_length
from backend.reasoning import task
from lab_server.languages import session_language
from study_flow import assignments

from .study import load_player_log, settings_of
from .texts import texts

DRAFT_KEY = "payoff_reasoning_draft"  # participant.vars: a refused verdict's input, per log file
FIELDS = ("orig_cor", "fin_cor", "err_type", "marked_sentences", "remarks")


def text_of(player) -> dict:
    return texts(session_language(player.session))


def keep_draft(player, values: dict) -> None:
    """Keep a refused verdict as it was sent, so that the page shows all of it again (nothing cut)."""
    kept = {field: "" if values.get(field) is None else str(values[field]) for field in FIELDS}
    player.participant.vars[DRAFT_KEY] = {player.log_file: kept}


def draft_of(player) -> dict:
    kept = (player.participant.vars.get(DRAFT_KEY) or {}).get(player.log_file, {})
    return {**dict.fromkeys(FIELDS, ""), **kept}


def drop_draft(player) -> None:
    player.participant.vars.pop(DRAFT_KEY, None)


def verdict_choices(text: dict, field: str, kept: str) -> list[dict]:
    """The radio buttons of a verdict, in oTree's order and ids (``id_<field>-0`` is correct, ``-1`` incorrect)."""
    return [
        {"id": f"id_{field}-{position}", "value": value, "label": text[key], "checked": kept == str(value)}
        for position, (value, key) in enumerate(((1, "verdict_correct"), (0, "verdict_incorrect")))
    ]


def page_vars(player) -> dict:
    log = load_player_log(player)
    text, kept = text_of(player), draft_of(player)
    sample = task.judging_view(log, settings_of(player.session).games[log.game])
    return dict(
        sample=sample,
        text=text,
        of_attempts=text["of_attempts"].format(n=sample["attempts"]),
        last_heading=text["last_response"].format(n=sample["attempts"]),
        orig_choices=verdict_choices(text, "orig_cor", kept["orig_cor"]),
        fin_choices=verdict_choices(text, "fin_cor", kept["fin_cor"]),
        error_types=task.error_type_help(),
        submitted=kept,
        max_remarks=task.MAX_REMARKS_CHARS,
    )


def js_vars(player) -> dict:
    """The browser's draft of this log (global/drafts.js) and the remarks counter's words."""
    text, prefix = text_of(player), f"payoff_reasoning_eval:{player.participant.code}:"
    return dict(
        draft_key=prefix + player.log_file,
        draft_prefix=prefix,
        max_remarks=task.MAX_REMARKS_CHARS,
        chars=text["chars"],
        chars_over=text["chars_over"],
    )


def complete_verdict(player) -> bool:
    """Whether the verdict oTree saved from a form submitted by a timeout or the admin's advance is one the judge
    could have sent (every rule of ``problems`` kept); if not, the judge's partial answer is cleared, never saved."""
    values = {field: player.field_maybe_none(field) for field in FIELDS}
    if not problems(player, values):
        return True
    for field in FIELDS:
        setattr(player, field, None)
    return False


def release_log(player) -> None:
    """Give the judge's reservation of the log up (study_flow/assignments): another judge gets it; the row stays in
    the assignment log as ``released``."""
    from . import Assignment

    for row in assignments.held_rows(
        Assignment, assignments.root(player).id, participant_code=player.participant.code, item_id=player.log_file
    ):
        if row.status == "reserved":
            assignments.release(row)


def number(value) -> int | None:
    return None if value in (None, "") else int(value)


def problems(player, values: dict) -> dict[str, str] | str:
    """What the judge must fix, per field, in the session's language; else what the final check refuses (a tampered
    form, in English, as one message); empty when the verdict may be saved."""
    return verdict_problems(load_player_log(player), values, text_of(player))


def verdict_problems(log, values: dict, text: dict) -> dict[str, str] | str:
    """``problems`` for a log and the texts of a language (escaped: oTree prints the messages unescaped)."""
    two = len(log.attempts) > 1
    orig, fin = number(values.get("orig_cor")), number(values.get("fin_cor")) if two else None
    found = {}
    remarks = values.get("remarks") or ""
    if (length := typed_length(remarks)) > task.MAX_REMARKS_CHARS:
        found["remarks"] = text["error_remarks_long"].format(max=task.MAX_REMARKS_CHARS, n=length)
    if orig is None:
        found["orig_cor"] = text["error_orig_missing"]
    if two and fin is None:
        found["fin_cor"] = text["error_fin_missing"]
    # Everything to fix at once: a verdict already "incorrect" needs types and sentences, even if the other is unset.
    types, marked = task.split_codes(values.get("err_type")), task.split_codes(values.get("marked_sentences"))
    if 0 in (orig, fin):
        if not types:
            found["err_type"] = text["error_types_missing"]
        if not marked:
            found["marked_sentences"] = text["error_sentences_missing"]
    elif "orig_cor" not in found and "fin_cor" not in found:
        if types:
            found["err_type"] = text["error_types_extra"]
        if marked:
            found["marked_sentences"] = text["error_sentences_extra"]
    if found:  # oTree prints these messages unescaped
        return {field: html.escape(message) for field, message in found.items()}
    final = task.check_verdict(
        log,
        orig_cor=orig,
        fin_cor=fin,
        err_type=values.get("err_type"),
        marked=values.get("marked_sentences"),
        remarks=remarks,
    )
    return html.escape(" ".join(final))
