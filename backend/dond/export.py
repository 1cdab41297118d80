"""The columns of the DoND exports, ``dond_games`` (one row per game) and ``dond_events`` (one row per event).

The oTree app and the self-play runner both build their rows here, so one report reads either. Text that may hold
line breaks (messages, prompts, raw replies) is escaped with ``escape_text`` (backslash, newline, carriage return,
tab become ``\\\\``, ``\\n``, ``\\r``, ``\\t``), because oTree's CSV export flattens line breaks;
``unescape_text`` restores it. Lists (item types, counts, values, proposals, prompts) are JSON text. Times are
ISO-8601 UTC with milliseconds (``2025-11-24T16:00:00.250Z``, ``backend.core.csvio.iso_utc``).

Identifiers a researcher joins on: every row has ``session_code``, and ``participant_code``, ``prolific_pid`` and
``study_id`` of a person: in ``dond_games`` the focal person (the one facing the LLM; with two people, the one who
waited longer), with both people's PIDs in ``prolific_pid_a``/``_b``; in ``dond_events`` the person whose event it
is, and for the LLM's and the system's events the game's focal person. They are empty where nobody played (self-play).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from backend.core.csvio import escape_text, iso_utc
from backend.core.llm import costs
from backend.dond import partner as dond_partner
from backend.dond.game import GameConfig, abort_reason_code, event_value, other_role, replay
from backend.dond.instances import Instance
from backend.dond.integrity import checked_events, integrity_text
from backend.dond.protocol import PLAIN, PLAYER_METRICS, Protocol, event_columns, player_metrics
from backend.dond.scoring import game_metrics, pay_rule, person_bonus
from backend.dond.treatments import DEFAULT as DEFAULT_TREATMENT
from backend.dond.treatments import TREATMENT_COLUMNS, Treatment

AGENCY_METRICS = PLAYER_METRICS

DOND_GAMES_COLUMNS = [
    "session_code",
    "game_id",
    "mode",
    "language",  # the people's pages (the session's language)
    "prompt_language",  # the model's prompts, item words and transcript (en, de or it)
    "opponent",  # llm, human or self (model vs model)
    "model",  # the LLM's model name; "human" for person vs person
    "cell",  # counterbalancing cell 1..4 (see backend.dond.game.CELLS)
    "focal_role",  # role of the person (A or B); A in model-vs-model runs
    "opener",
    "participant_a",
    "participant_b",
    "participant_code",  # the focal person's
    "prolific_pid",  # the focal person's
    "prolific_pid_a",
    "prolific_pid_b",
    "study_id",
    "instance_seed",
    "item_types",
    "counts",
    "values_a",
    "values_b",
    "max_messages",
    "llm_reprompts",
    "clembench_exact",  # 1 when every departure from clembench (backend.dond.departures) was off
    "outcome",  # success, lose, aborted or unfinished
    "success",
    "lose",
    "aborted",
    "abort_reason",
    "aborted_by",
    # Person vs person, a partner who left (backend.dond.partner): 1 when a model took over a seat, which seat, why
    # (partner_left, partner_timeout) and when; such a game's model column reads takeover:<model>.
    *dond_partner.TAKEOVER_COLUMNS,
    "proposal_a",
    "proposal_b",
    "points_a",
    "points_b",
    "points_focal",
    "points_opponent",
    "bonus_points",
    "sum_points",
    "max_sum_points",
    "sum_share",
    "pareto_improvement",
    "pareto_optimal",
    "main_score",
    "mode_score",
    "mode_pareto_optimal",
    "messages_a",
    "messages_b",
    "violations_a",
    "violations_b",
    "llm_errors_a",  # model calls that failed after the client's retries (the model never answered): not violations
    "llm_errors_b",
    "reprompts",
    "llm_calls",
    "llm_tokens",
    "llm_cost",  # what those calls cost by the price table (llm_prices_file); empty while a price is unknown
    "llm_cost_currency",
    "started_at",
    "ended_at",
    # LLM agency metrics (backend.dond.protocol.player_metrics), per LLM role; empty for a person's role.
    "model_a",
    "model_b",
    "llm_protocol",
    "llm_word_limit",
    *[f"{metric}_{side}" for side in ("a", "b") for metric in AGENCY_METRICS],
    # The game's treatment (backend.dond.treatments), as the session had it when the game was created.
    *TREATMENT_COLUMNS,  # value_visibility, agent_description, disclose_description, opponent_intro, model_failure_pay
    "pay_rule",  # what paid bonus_points: mode_goal, or model_failure_half_total / _zero (the model broke the game)
    "integrity",  # empty, or what the stored history holds that should not be there (backend.dond.integrity)
]

DOND_EVENTS_COLUMNS = [
    "session_code",
    "game_id",
    "participant_code",
    "prolific_pid",
    "study_id",
    "seq",
    "created_at",
    "kind",  # message, proposal, violation, llm_error, reprompt, abort, llm_call, input_rejected, note, probe
    "role",
    "actor",  # human, llm or system
    "text",
    "proposal",
    "error_kind",
    "error",
    "model",
    "llm_messages",
    "llm_reply",
    "llm_reasoning",  # a reasoning model's thinking, kept apart from the reply
    "reasoning_shown",  # 1 when that thinking was previewed as it streamed (an undeclared template-opened thinker)
    "max_tokens",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "call_cost",  # of an llm_call: its cost by the price table; 0 cached or never sent; empty while unknown
    "llm_cost_currency",
    "llm_cached",  # of an llm_call: 1 when a runner's response cache answered it (nothing was sent)
    "attempts",
    "finish_reason",
    "llm_error_kind",
    "purpose",  # of an llm_call: note, message or probe
    "turn",  # of note, probe and llm_call events: how many public moves the role had made before
    # Analysis of the notes protocol (backend.dond.protocol.event_columns): filled on note and probe events
    # and on the LLM's public moves, empty elsewhere.
    "offer_status",
    "offer",
    "note_split",
    "belief_split",
    "internal_verdict",
    "external_verdict",
    "parse_error",
    "integrity",  # empty, or why the game's replay leaves this event out (backend.dond.integrity.checked_events)
]
# A late call (backend.dond.integrity.late_reason): an event the game as stored refused, kept apart, one row each.
DOND_LATE_CALLS_COLUMNS = [
    "session_code",
    "game_id",
    "arrived_at",  # when the writer refused it (ISO-8601 UTC); created_at is when the LLM turn made it
    "late_reason",  # after_abort:<reason code>, after_end (both had proposed) or refused:<error kind>
    *[
        name
        for name in DOND_EVENTS_COLUMNS[: DOND_EVENTS_COLUMNS.index("offer_status")]
        if name not in ("session_code", "game_id", "seq")
    ],
]
ANALYSIS_COLUMNS = DOND_EVENTS_COLUMNS[
    DOND_EVENTS_COLUMNS.index("offer_status") : DOND_EVENTS_COLUMNS.index("integrity")
]


def _json_list(values: Iterable[Any] | None) -> str:
    return "" if values is None else json.dumps(list(values), ensure_ascii=False)


def _cell(value: Any) -> Any:
    """A value for CSV: None and NaN become empty; booleans become 0/1."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return int(value)
    return value


def event_row(
    event: Mapping[str, Any] | Any,
    *,
    session_code: str,
    game_id: str,
    seq: int,
    person: Mapping[str, str] | None = None,
    prices: costs.PriceTable = costs.EMPTY_TABLE,
) -> dict[str, Any]:
    """One ``dond_events`` row from a stored event (mapping or object with the same attribute names); ``person``
    gives its ``participant_code``, ``prolific_pid`` and ``study_id``; an ``llm_call`` gets its cost by ``prices``
    (`call_cost_cells`).

    >>> row = event_row({"kind": "message", "role": "A", "actor": "human", "text": "hi\\nthere", "created_at": 0.5}, session_code="s", game_id="g", seq=0)
    >>> row["text"], row["proposal"], row["created_at"], list(row) == DOND_EVENTS_COLUMNS
    ('hi\\\\nthere', '', '1970-01-01T00:00:00.500Z', True)
    """
    proposal = event_value(event, "proposal")
    try:
        proposal = _json_list(json.loads(proposal) if isinstance(proposal, str) and proposal else proposal)
    except (ValueError, TypeError):  # a broken row: its text as stored (the game's integrity names it)
        proposal = escape_text(str(proposal))
    row = {name: _cell(event_value(event, name)) for name in DOND_EVENTS_COLUMNS}
    row.update(
        session_code=session_code,
        game_id=game_id,
        seq=seq,
        text=escape_text(event_value(event, "text")),
        error=escape_text(event_value(event, "error")),
        llm_messages=escape_text(event_value(event, "llm_messages")),
        llm_reply=escape_text(event_value(event, "llm_reply")),
        llm_reasoning=escape_text(event_value(event, "llm_reasoning")),
        proposal=proposal,
        created_at=_time(event_value(event, "created_at")),
        **_person_columns(person),
        **call_cost_cells(event, prices),
    )
    return row


def call_cost_cells(event: Mapping[str, Any] | Any, prices: costs.PriceTable) -> dict[str, Any]:
    """The cost cells of one event: for an ``llm_call``, what it cost by ``prices`` (0 when a response cache answered
    it or it was never sent; empty while its price or tokens are unknown), the currency and whether it was cached;
    empty for every other event.

    >>> table = costs.PriceTable.model_validate({"currency": "USD", "models": {"m": {"input_per_million": 2,
    ...                                          "output_per_million": 8}}})
    >>> call = {"kind": "llm_call", "model": "m", "prompt_tokens": 1000, "completion_tokens": 500}
    >>> call_cost_cells(call, table), call_cost_cells({**call, "llm_cached": True}, table)["call_cost"]
    ({'call_cost': 0.006, 'llm_cost_currency': 'USD', 'llm_cached': 0}, 0.0)
    >>> call_cost_cells({**call, "model": "x"}, table)["call_cost"], call_cost_cells({"kind": "message"}, table)
    ('', {'call_cost': '', 'llm_cost_currency': '', 'llm_cached': ''})
    """
    if event_value(event, "kind") != "llm_call":
        return dict(call_cost="", llm_cost_currency="", llm_cached="")
    cached = str(event_value(event, "llm_cached") or "").strip().lower() in ("1", "true")
    if cached or event_value(event, "llm_error_kind") in costs.NOT_SENT:
        cost: float | None = 0.0
    else:
        cost = costs.call_cost(
            *(event_value(event, name) for name in ("model", "prompt_tokens", "completion_tokens")), prices
        )
    return dict(call_cost=costs.cell(cost), llm_cost_currency=prices.currency, llm_cached=int(cached))


def _number(value: Any) -> float:
    """A stored number; 0 for an empty or unreadable one (a broken row never fails the export)."""
    try:
        number = float(value or 0)
    except (ValueError, TypeError):
        return 0
    return number if math.isfinite(number) else 0


def _time(value: Any) -> str:
    """``iso_utc`` of a stored time; a broken one as it is stored (escaped)."""
    try:
        return iso_utc(value)
    except (ValueError, TypeError, OverflowError, OSError):
        return escape_text(str(value))


def late_call_row(
    event: Mapping[str, Any],
    *,
    session_code: str,
    game_id: str,
    arrived_at: float,
    late_reason: str,
    person: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One ``dond_late_calls`` row: the refused event's ``dond_events`` columns (no ``seq``: it is not one of the
    game's events), with when it arrived and why it was refused.

    >>> row = late_call_row({"kind": "message", "role": "B", "actor": "llm", "text": "ok"}, session_code="s",
    ...                     game_id="s-1", arrived_at=1.0, late_reason="after_abort:time_limit")
    >>> row["kind"], row["late_reason"], row["arrived_at"], list(row) == DOND_LATE_CALLS_COLUMNS
    ('message', 'after_abort:time_limit', '1970-01-01T00:00:01.000Z', True)
    """
    row = event_row(event, session_code=session_code, game_id=game_id, seq=0, person=person)
    row.update(arrived_at=_time(arrived_at), late_reason=late_reason)
    return {name: row[name] for name in DOND_LATE_CALLS_COLUMNS}


def _person_columns(person: Mapping[str, str] | None) -> dict[str, str]:
    person = person or {}
    return {name: str(person.get(name) or "") for name in ("participant_code", "prolific_pid", "study_id")}


def event_rows(
    events: list[Mapping[str, Any] | Any],
    instance: Instance,
    config: GameConfig,
    *,
    session_code: str,
    game_id: str,
    people: Mapping[str, Mapping[str, str]] | None = None,
    focal_role: str = "A",
    prices: costs.PriceTable = costs.EMPTY_TABLE,
) -> list[dict[str, Any]]:
    """The ``dond_events`` rows of one game, with the notes-protocol analysis columns filled in and each model call's
    cost by ``prices``.

    ``people`` maps each role a person plays to their ``participant_code``, ``prolific_pid`` and ``study_id``; an
    event of a role nobody plays (the LLM's, the system's) gets those of ``focal_role``.
    """
    people = people or {}
    events = list(events)
    kept, problems = checked_events(events, config, counts=instance.counts)
    analysis = iter(event_columns(kept, instance, config))  # the analysis reads the replayable events only
    flagged = {int(problem.rsplit("@", 1)[1]): problem.rsplit("@", 1)[0] for problem in problems}
    rows = []
    for seq, event in enumerate(events):
        person = people.get(event_value(event, "role") if event is not None else None) or people.get(focal_role)
        row = event_row(event or {}, session_code=session_code, game_id=game_id, seq=seq, person=person, prices=prices)
        extra = next(analysis) if seq not in flagged else {}
        row.update({name: escape_text(str(value)) for name, value in extra.items() if name in ANALYSIS_COLUMNS})
        row["integrity"] = flagged.get(seq, "")
        rows.append(row)
    return rows


def game_row(
    events: list[Mapping[str, Any] | Any],
    instance: Instance,
    config: GameConfig,
    *,
    session_code: str,
    game_id: str,
    opponent: str,
    model: str,
    cell: int,
    focal_role: str,
    participant_a: str = "",
    participant_b: str = "",
    llm_models: Mapping[str, str] | None = None,
    protocol: Protocol = PLAIN,
    people: Mapping[str, Mapping[str, str]] | None = None,
    treatment: Treatment = DEFAULT_TREATMENT,
    partner_left_pay: str = "half_total",
    prices: costs.PriceTable = costs.EMPTY_TABLE,
    page_language: str = "",
) -> dict[str, Any]:
    """One ``dond_games`` row: instance, cell, proposals, outcome, every metric of ``backend.dond.scoring.game_metrics``.

    ``llm_models`` maps each role an LLM plays to its model name (``{"B": "gpt-x"}`` against a person, both roles
    in self-play); those roles get the agency metrics (``<metric>_a`` / ``<metric>_b``, see
    ``backend.dond.protocol.player_metrics``) with ``protocol``'s word limit.

    A person-vs-person game whose partner left (``backend.dond.partner``): ``pay_rule`` is ``left_game`` for the one
    who left and ``partner_left_<partner_left_pay>`` for the one left behind in a game that ended; a game a model
    took over fills the takeover columns, names ``takeover:<model>`` in ``model`` (a condition of its own in the
    report, never pooled with person-vs-person or person-vs-model games) and gets the model's agency metrics.

    ``bonus_points`` is the focal player's objective in the mode (own / sum / own − other), clamped at 0
    (0 unless the game succeeded), except when a person faced an LLM that broke the game (``llm_error``,
    ``llm_invalid``, ``llm_budget``, ``llm_time_limit``): then ``treatment.model_failure_pay`` pays (``pay_rule`` says which rule paid;
    ``backend.dond.scoring.pay_rule``). The treatment keys are columns of their own. Counts of messages, violations, failed model calls (``llm_errors_*``, never
    counted as violations), re-prompts, LLM calls and tokens come from the events; ``started_at``/``ended_at`` are
    the first and last event times in ISO-8601 UTC (``ended_at`` empty while unfinished). ``people`` maps each role
    a person plays to their ``participant_code``, ``prolific_pid`` and ``study_id`` (see the module doc).
    ``language`` is ``page_language`` (the people's pages), else the game's; ``prompt_language`` is the game's (the
    model's prompts and item words), which differs in a session whose language was added by catalogues alone.
    A history that cannot be replayed by the rules is read as far as it can (``backend.dond.integrity``): the
    events it leaves out are named in ``integrity`` and counted nowhere else.
    """
    events, problems = checked_events(events, config, counts=instance.counts)
    state = replay(events, config, counts=instance.counts)
    outcome = state.outcome or "unfinished"
    switch = dond_partner.takeover_columns(events)
    if switch["taken_over_by_model"]:
        taker = dond_partner.takeover_of(events)
        llm_models = {**(llm_models or {}), switch["takeover_role"]: event_value(taker, "model") or ""}
        model = f"{dond_partner.TAKEOVER_MODEL_PREFIX}{event_value(taker, 'model') or ''}"
    row: dict[str, Any] = dict.fromkeys(DOND_GAMES_COLUMNS, "")
    row.update({name: _cell(value) for name, value in treatment.to_dict().items()})
    row.update(
        session_code=session_code,
        game_id=game_id,
        mode=config.mode,
        language=page_language or config.language,
        prompt_language=config.language,
        opponent=opponent,
        model=model,
        cell=cell,
        focal_role=focal_role,
        opener=config.opener,
        participant_a=participant_a,
        participant_b=participant_b,
        instance_seed=_cell(instance.seed),
        item_types=_json_list(instance.item_types),
        counts=_json_list(instance.counts),
        values_a=_json_list(instance.values_a),
        values_b=_json_list(instance.values_b),
        max_messages=config.max_messages,
        llm_reprompts=config.llm_reprompts,
        clembench_exact=int(config.clembench_exact),
        outcome=outcome,
        abort_reason=escape_text(state.abort_reason),
        aborted_by=state.aborted_by or "",
        proposal_a=_json_list(state.proposals["A"]),
        proposal_b=_json_list(state.proposals["B"]),
        messages_a=state.messages_sent["A"],
        messages_b=state.messages_sent["B"],
        violations_a=state.violations["A"],
        violations_b=state.violations["B"],
        llm_errors_a=state.llm_errors["A"],
        llm_errors_b=state.llm_errors["B"],
        integrity=integrity_text(problems),
    )
    row.update(switch, takeover_at=iso_utc(switch["takeover_at"]) if switch["taken_over_by_model"] else "")
    people = people or {}
    focal_person = people.get(focal_role) or next(iter(people.values()), None)
    row.update(_person_columns(focal_person))
    row["prolific_pid_a"] = _person_columns(people.get("A"))["prolific_pid"]
    row["prolific_pid_b"] = _person_columns(people.get("B"))["prolific_pid"]
    kinds = [event_value(event, "kind") for event in events]
    row["reprompts"] = kinds.count("reprompt")
    row["llm_calls"] = kinds.count("llm_call")
    row["llm_tokens"] = sum(
        int(_number(event_value(event, name)))
        for event in events
        if event_value(event, "kind") == "llm_call"
        for name in ("prompt_tokens", "completion_tokens")
    )
    spent = costs.CostSum(prices.currency)  # by ``prices``; unknown (empty) while a call's price or tokens are
    for event in events:
        if event_value(event, "kind") == "llm_call" and event_value(event, "llm_error_kind") not in costs.NOT_SENT:
            cost = call_cost_cells(event, prices)["call_cost"]
            spent.add(None if cost == "" else cost)
    row["llm_cost"], row["llm_cost_currency"] = costs.cell(spent.total), prices.currency
    llm_models = dict(llm_models or {})
    row.update(
        model_a=llm_models.get("A", ""),
        model_b=llm_models.get("B", ""),
        llm_protocol=protocol.name if llm_models else "",
        llm_word_limit=protocol.word_limit if llm_models else "",
    )
    for role in llm_models:
        metrics = player_metrics(events, instance, config, role, word_limit=protocol.word_limit)
        row.update({f"{name}_{role.lower()}": _cell(value) for name, value in metrics.items()})
    times = [_number(t) for t in (event_value(event, "created_at") for event in events) if t not in (None, "")]
    row["started_at"] = iso_utc(min(times)) if times else ""
    row["ended_at"] = iso_utc(max(times)) if times and outcome != "unfinished" else ""
    if outcome == "unfinished":
        return row
    metrics = game_metrics(
        instance.counts,
        instance.values_a,
        instance.values_b,
        state.proposals["A"],
        state.proposals["B"],
        mode=config.mode,
        aborted=state.aborted,
    )
    for name in DOND_GAMES_COLUMNS:
        if name in metrics:
            row[name] = _cell(metrics[name])
    focal, opponent_points = (
        metrics.get(f"points_{focal_role.lower()}"),
        metrics.get(f"points_{other_role(focal_role).lower()}"),
    )
    if not state.aborted:
        row.update(points_focal=focal, points_opponent=opponent_points)
    left = opponent == "human" and dond_partner.partner_rule(
        outcome=outcome,
        abort_code=abort_reason_code(state.abort_reason),
        aborted_by=state.aborted_by or "",
        takeover_role=switch["takeover_role"],
        role=focal_role,
        partner_left_pay=partner_left_pay,
    )
    rule = left or pay_rule(
        outcome,
        abort_reason_code(state.abort_reason),
        model_failure_pay=treatment.model_failure_pay,
        person_vs_llm=opponent == "llm",
    )
    row["pay_rule"] = rule
    row["bonus_points"] = person_bonus(
        config.mode,
        focal,
        opponent_points,
        outcome=outcome,
        rule=rule,
        counts=instance.counts,
        own_values=instance.values(focal_role),
    )
    return row
