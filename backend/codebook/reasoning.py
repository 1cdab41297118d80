"""The payoff_reasoning_eval exports' columns: the published protocol's 12, what we add beside them, the log."""

from __future__ import annotations

from backend.reasoning.protocol import PROTOCOL_COLUMNS
from backend.reasoning.task import IDENTITY_COLUMNS

from .columns import INTEGRITY, PEOPLE, STUDY, Column, Export, by_name, pick

KNOWN = by_name(
    *STUDY,
    *PEOPLE,
    INTEGRITY,
    Column("file", "text", "", "The judged reasoning log (its file name)."),
    Column("game", "text", "", "The 2x2 game the log is about, as the log names it."),
    Column("attempts", "integer", "attempts", "How many attempts (1-5) the log holds."),
    Column("orig_choice", "text", "", "The model's choice in its first attempt."),
    Column("final_choice", "text", "", "The model's choice in its last attempt."),
    Column("orig_cor", "0/1", "", "The judge's verdict: 1 when the first attempt reasoned correctly."),
    Column("fin_cor", "0/1", "", "The judge's verdict on the last attempt (equals orig_cor with one attempt)."),
    Column("err_type", "text", "", "The error types the judge found, codes joined by # (pa, rga, pc, ...)."),
    Column("sentence", "text", "", "The faulty sentences the judge marked, joined by #."),
    Column(
        "con_mat",
        "text",
        "",
        "Confusion label of the judge's first verdict against the automated check (TP, FP, TN, FN).",
    ),
    Column("remarks", "text", "", "The judge's remarks; line breaks written as \\n."),
    Column("failed_queries", "text", "", "The automated check's failed queries of the first attempt, from the log."),
    Column("judged_at", "time", "ISO-8601 UTC", "When the judge submitted the verdict."),
    Column("status", "text", "", "The reservation: reserved (held, not finished), done, or released."),
    Column("reserved_at", "time", "ISO-8601 UTC", "When the log was given to the judge."),
    Column("finished_at", "time", "ISO-8601 UTC", "When the judge finished it; empty until done."),
)
STUDY_NAMES = [column.name for column in STUDY]
# Beside the published 12 columns, never inside them: the judge (oTree code), the session and the time.
PROTOCOL_BESIDE = ["participant_code", "session_code", "config_name", "language", "is_test", "judged_at", "integrity"]

EXPORTS = (
    Export(
        "payoff_reasoning_eval",
        "custom_export",
        "one verdict: one judge's protocol row for one log (the published 12 columns first, then who, where, when)",
        pick(KNOWN, [*PROTOCOL_COLUMNS, *PROTOCOL_BESIDE]),
    ),
    Export(
        "payoff_reasoning_eval",
        "custom_export_protocol_with_ids",
        "one verdict, as custom_export, with the judge's Prolific IDs (the local judging tool's layout first)",
        pick(KNOWN, [*PROTOCOL_COLUMNS, *IDENTITY_COLUMNS, "config_name", "language", "is_test", "integrity"]),
    ),
    Export(
        "payoff_reasoning_eval",
        "custom_export_assignments",
        "one reservation: which judge held or finished which log, and when",
        pick(
            KNOWN,
            [
                *STUDY_NAMES,
                "file",
                "participant_code",
                "status",
                "reserved_at",
                "finished_at",
                "prolific_pid",
                "study_id",
                "integrity",
            ],
        ),
    ),
)
