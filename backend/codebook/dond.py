"""The dond exports' columns: games (one row per game) and events (one row per stored event). The column lists are
``backend.dond.export``'s; what each column means is said here, with the study columns in front."""

from __future__ import annotations

from backend.dond.export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS, DOND_LATE_CALLS_COLUMNS

from .columns import INTEGRITY, PEOPLE, STUDY, Column, Export, by_name, pick

_SIDE_METRICS = {
    "turns": ("integer", "turns", "LLM role {side}: its public moves"),
    "internal_faithfulness": ("number", "share", "LLM role {side}, notes protocol: share of moves its note supports"),
    "external_faithfulness": ("number", "share", "LLM role {side}, notes protocol: share of probes its moves match"),
    "offer_failures": ("integer", "attempts", "LLM role {side}: proposals it had to be asked again for"),
    "note_under_limit": ("number", "share", "LLM role {side}: share of notes within llm_word_limit"),
    "message_under_limit": ("number", "share", "LLM role {side}: share of messages within llm_word_limit"),
    "note_json": ("number", "share", "LLM role {side}: share of notes that were valid JSON"),
    "proposal_format": ("number", "share", "LLM role {side}: share of proposals in the required format"),
    "utility": ("number", "points", "LLM role {side}: the points its final proposal would give it"),
}
_PER_SIDE = [
    Column(f"{metric}_{side}", kind, unit, text.format(side=side.upper()) + ".")
    for side in ("a", "b")
    for metric, (kind, unit, text) in _SIDE_METRICS.items()
]
_ROLES = [
    Column(f"{name}_{side}", kind, unit, text.format(side=side.upper()))
    for side in ("a", "b")
    for name, kind, unit, text in (
        ("participant", "text", "", "oTree code of the person in role {side}; empty for a model."),
        ("prolific_pid", "text", "", "Prolific ID of the person in role {side}; empty for a model."),
        ("values", "JSON", "points", "Role {side}'s value of one unit of each item type."),
        ("proposal", "JSON", "items", "Role {side}'s last proposal: the units of each item type it keeps."),
        ("points", "integer", "points", "Points role {side} ends with (0 unless the game ended in agreement)."),
        ("messages", "integer", "messages", "Messages role {side} sent."),
        ("violations", "integer", "", "Rule violations by role {side} (a model's, answered by a reprompt)."),
        ("llm_errors", "integer", "calls", "Model calls for role {side} that failed after the client's retries."),
        ("model", "text", "", "The model that played role {side}; empty for a person."),
    )
]

KNOWN = by_name(
    *STUDY,
    *PEOPLE,
    INTEGRITY,
    *_PER_SIDE,
    *_ROLES,
    Column("game_id", "text", "", "The game: <session code>-<number>."),
    Column("mode", "text", "", "The game's goal: semi (own points), coop (joint points) or comp (beat the other)."),
    Column(
        "prompt_language",
        "text",
        "",
        "The model's language: its prompts, the item words it reads and writes, the transcript's (en, de or it). "
        "Equal to language except in a session whose language a lab added as catalogues (llm_prompt_language).",
    ),
    Column("opponent", "text", "", "llm (a person against a model), human (two people) or self (model vs model)."),
    Column(
        "model", "text", "", "Games: the opponent model's name (human for person vs person). Events: the model called."
    ),
    Column("cell", "integer", "", "The counterbalancing cell 1-4 (who opens, which role the person takes)."),
    Column("focal_role", "text", "", "The person's role: A or B (A in model-vs-model runs)."),
    Column("opener", "text", "", "The role that moved first: A or B."),
    Column("instance_seed", "integer", "", "The seed that drew the game's items, counts and values."),
    Column("item_types", "JSON", "", "The item types, in order."),
    Column("counts", "JSON", "items", "How many units of each item type there are."),
    Column("max_messages", "integer", "messages", "The message limit of the game."),
    Column("llm_reprompts", "integer", "", "How often a model was allowed to be asked again after a rule break."),
    Column("outcome", "text", "", "success (agreement), lose (proposals did not match), aborted or unfinished."),
    Column("success", "0/1", "", "1 when the game ended in agreement."),
    Column("lose", "0/1", "", "1 when the final proposals did not match."),
    Column("aborted", "0/1", "", "1 when the game was stopped (time, a model failure, a limit)."),
    Column("abort_reason", "text", "", "Why the game was stopped; empty otherwise."),
    Column("aborted_by", "text", "", "Who stopped it: a role, the system or the admin."),
    Column("points_focal", "integer", "points", "The person's points (role focal_role)."),
    Column("points_opponent", "integer", "points", "The other side's points."),
    Column("bonus_points", "number", "points", "The points the person is paid for (pay_rule)."),
    Column("sum_points", "integer", "points", "points_a + points_b."),
    Column("max_sum_points", "integer", "points", "The largest joint points any split allows."),
    Column("sum_share", "number", "share", "sum_points / max_sum_points."),
    Column("pareto_improvement", "0/1", "", "1 when another split gives both sides at least as much, one more."),
    Column("pareto_optimal", "0/1", "", "1 when the agreed split is Pareto-optimal."),
    Column("main_score", "number", "", "The game's headline score (backend.dond.scoring.game_metrics)."),
    Column("mode_score", "number", "", "The score of the mode's own goal."),
    Column("mode_pareto_optimal", "0/1", "", "1 when the split is optimal for the mode's goal."),
    Column("reprompts", "integer", "", "Reprompts sent to a model in the game."),
    Column("llm_calls", "integer", "calls", "Model calls in the game."),
    Column("llm_tokens", "integer", "tokens", "Tokens those calls used (prompt plus completion)."),
    Column(
        "llm_cost",
        "number",
        "currency",
        "What those calls cost by the price table (session key llm_prices_file, a runner's --prices): prompt and "
        "completion tokens times the model's prices per million; 0 for the offline scripted model; empty while a "
        "call's price or tokens are unknown (never counted as free).",
    ),
    Column("llm_cost_currency", "text", "", "The price table's currency (empty without a price table)."),
    Column("started_at", "time", "ISO-8601 UTC", "When the game started."),
    Column("ended_at", "time", "ISO-8601 UTC", "When the game ended; empty while unfinished."),
    Column("llm_protocol", "text", "", "How the model was asked: plain or notes."),
    Column("llm_word_limit", "integer", "words", "The word limit the model was given."),
    Column("value_visibility", "text", "", "Treatment: what each side sees of the other's values."),
    Column("agent_description", "text", "", "Treatment: how the model partner was described."),
    Column("disclose_description", "0/1", "", "Treatment: 1 when the description was shown to the person."),
    Column("opponent_intro", "text", "", "Treatment: how the opponent was introduced."),
    Column("model_failure_pay", "text", "", "Treatment: what the person is paid if the model breaks the game."),
    Column("pay_rule", "text", "", "What paid bonus_points: mode_goal, or a model_failure_* rule."),
    Column("seq", "integer", "", "The event's number within its game (0 = first)."),
    Column("created_at", "time", "ISO-8601 UTC", "When the event was stored."),
    Column("kind", "text", "", "message, proposal, violation, llm_error, reprompt, abort, llm_call, ..."),
    Column("role", "text", "", "The role the event belongs to: A or B (empty for the system)."),
    Column("actor", "text", "", "Who caused it: human, llm or system."),
    Column("text", "text", "", "A message's text."),
    Column("proposal", "JSON", "items", "A proposal: the units of each item type the role keeps."),
    Column("error_kind", "text", "", "A violation's or input refusal's kind."),
    Column("error", "text", "", "What was wrong, in words."),
    Column("llm_messages", "JSON", "", "A model call: the messages sent."),
    Column("llm_reply", "text", "", "A model call: the reply."),
    Column("llm_reasoning", "text", "", "A reasoning model's thinking, kept apart from the reply."),
    Column("reasoning_shown", "0/1", "", "1 when that thinking was previewed as it streamed."),
    Column("max_tokens", "integer", "tokens", "A model call's token budget."),
    Column("latency_s", "number", "seconds", "A model call's time to answer."),
    Column("prompt_tokens", "integer", "tokens", "A model call's prompt tokens."),
    Column("completion_tokens", "integer", "tokens", "A model call's completion tokens."),
    Column(
        "call_cost",
        "number",
        "currency",
        "A model call's cost by the price table (session key llm_prices_file, a runner's --prices): its prompt and "
        "completion tokens times the model's prices per million; 0 for a call answered from a runner's response "
        "cache, one never sent (the spending cap) and the offline scripted model; empty while its price or tokens "
        "are unknown (never counted as free). A game's llm_cost is their sum.",
    ),
    Column(
        "llm_cached",
        "0/1",
        "",
        "A model call: 1 when a runner's response cache (--cache) answered it with a reply stored for the same full "
        "request (nothing was sent; its tokens are the first call's, its cost 0); 0 for a call sent.",
    ),
    Column("finish_reason", "text", "", "Why the model stopped (stop, length, ...)."),
    Column("llm_error_kind", "text", "", "A failed call's kind (timeout, connection, ...)."),
    Column("purpose", "text", "", "What a model call was for: note, message or probe."),
    Column("turn", "integer", "", "Public moves the role had made before this event."),
    Column("offer_status", "text", "", "Notes protocol: whether the move carried an offer."),
    Column("offer", "JSON", "items", "Notes protocol: the offer read from the move."),
    Column("note_split", "JSON", "items", "Notes protocol: the split the private note planned."),
    Column("belief_split", "JSON", "items", "Notes protocol: the split the model believed the other wanted."),
    Column("internal_verdict", "text", "", "Notes protocol: whether the move follows the note."),
    Column("external_verdict", "text", "", "Notes protocol: whether the move matches the probe."),
    Column("parse_error", "text", "", "Notes protocol: why a note or probe could not be read; empty otherwise."),
)
KNOWN["clembench_exact"] = Column(
    "clembench_exact",
    "0/1",
    "",
    "1 when the game ran clembench's rules exactly, without our departures (docs/turn-flow.md).",
)
KNOWN["arrived_at"] = Column(
    "arrived_at", "time", "ISO-8601 UTC", "Late call: when the reply reached a game that had already ended."
)
KNOWN["late_reason"] = Column(
    "late_reason",
    "text",
    "",
    "Late call: why it was kept out of the game: after_abort:<reason>, after_end or refused:<error kind>.",
)
KNOWN.update(
    by_name(
        Column(
            "taken_over_by_model",
            "0/1",
            "",
            "1 when a model took over a person's seat after they left (partner_leaves).",
        ),
        Column("takeover_role", "text", "", "The seat (A or B) a model took over; empty otherwise."),
        Column(
            "takeover_reason", "text", "", "Why: partner_left (no sign of life) or partner_timeout (stopped answering)."
        ),
        Column("takeover_at", "time", "ISO-8601 UTC", "When the model took over the seat."),
    )
)
KNOWN["attempts"] = Column("attempts", "integer", "calls", "A model call's attempts, retries included.")
STUDY_NAMES = [column.name for column in STUDY]


def _with_study(columns) -> list[str]:
    return [*STUDY_NAMES, *(name for name in columns if name not in STUDY_NAMES)]


EXPORTS = (
    Export("dond", "custom_export_dond_games", "one game", pick(KNOWN, _with_study(DOND_GAMES_COLUMNS))),
    Export(
        "dond", "custom_export_dond_events", "one stored event of a game", pick(KNOWN, _with_study(DOND_EVENTS_COLUMNS))
    ),
    Export(
        "dond",
        "custom_export_dond_late_calls",
        "one model call or event that arrived after its game had ended (kept out of the game)",
        pick(KNOWN, _with_study(DOND_LATE_CALLS_COLUMNS)),
    ),
)
