"""Model-vs-model DoND runs with the app's game, prompts, metrics and export columns.

``python -m backend.dond.selfplay --model-a NAME --model-b NAME --instances N --mode semi --language en --concurrency 16
--out DIR`` plays instances ``generate_instance(instance_seed + k)``, k = 0..N−1, in every debiasing cell (LAMEN
§2.6): which value function model A gets (side) × who opens. With one model (``--model-b`` equal to or left as
``--model-a``) swapping sides only swaps identical players, so each instance is played in cells 1 and 2 (A opens, B
opens): **2 games per instance**; with two different models in all four cells: **4 games per instance**.

Games run concurrently (asyncio, ``--concurrency`` games at once) against any OpenAI-compatible endpoint
(``--base-url`` or ``OPENAI_BASE_URL``; ``scripted`` plays offline). Output: ``DIR/dond_games.csv`` and
``DIR/dond_events.csv`` with exactly the app's export columns (``backend.dond.export``; ``opponent = self``), so
``python -m backend report DIR/dond_games.csv`` covers both. A game's events are written first and its games row
last; a rerun of the same command keeps every game that has a games row and replays only the others (events of an
interrupted game are dropped first), so an interrupted run resumes without replaying finished games.

Treatments (``backend.dond.treatments``): ``--visibility own,both`` and ``--describe none,expert`` (each a list of
one or more conditions) play the SAME instances under every condition (the cross product when both are given),
each counterbalanced as above, so conditions compare in pairs (``python -m backend report``: "visibility gain",
"description effect"). ``own``: each model sees only its own values; ``both``: each sees both tables. The
description is given to model A (the focal player), whose figures the report compares; model B stays the neutral
representative. Each games row carries its condition columns; game ids of a condition other than own/none end in
``-v<visibility>-d<description>``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from backend.core import run_costs, runs
from backend.core.llm import LLMSettings, add_endpoint_options, costs, settings_from_args
from backend.core.progress import ProgressBar
from backend.dond.departures import exact_problem
from backend.dond.export import DOND_EVENTS_COLUMNS, DOND_GAMES_COLUMNS, event_rows, game_row
from backend.dond.game import GameConfig, cell_roles, other_role, replay
from backend.dond.instances import Instance, generate_instance
from backend.dond.play import llm_turns, system_event
from backend.dond.protocol import PLAIN, PROTOCOLS, Protocol
from backend.dond.rules import LANGUAGES, MODES, check_language, check_mode
from backend.dond.treatments import (
    AGENT_DESCRIPTIONS,
    SELFPLAY_VISIBILITIES,
    LLMView,
    Treatment,
    llm_view,
    visibility_problem,
)

SESSION_CODE = "selfplay"
GAMES_FILE, EVENTS_FILE, RUN_FILE = "dond_games.csv", "dond_events.csv", "run.json"


@dataclass(frozen=True)
class Match:
    """One planned game: the instance number, its cell and which model plays which role."""

    instance_number: int
    cell: int
    models: tuple[tuple[str, str], ...]  # ((role, model), ...)
    visibility: str = "own"
    description: str = "none"

    @property
    def game_id(self) -> str:
        base = f"i{self.instance_number}-c{self.cell}"
        if (self.visibility, self.description) == ("own", "none"):
            return base  # as before the treatments, so older runs resume
        return f"{base}-v{self.visibility}-d{self.description}"

    @property
    def focal(self) -> str:
        return cell_roles(self.cell)[0]

    def treatment(self) -> Treatment:
        """The condition as the games row records it (the description is model A's, the focal player's)."""
        return Treatment(value_visibility=self.visibility, agent_description=self.description)

    def view(self, role: str) -> LLMView:
        """What the model playing ``role`` is told: both models share the visibility; model A gets the description."""
        view = llm_view(self.treatment(), "self")
        return dataclasses.replace(view, description=self.description if role == self.focal else "none")


def conditions(text: str, *, option: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of one or more distinct conditions of ``allowed``, as given on the command line.

    >>> conditions("own, both", option="--visibility", allowed=SELFPLAY_VISIBILITIES)
    ('own', 'both')
    >>> conditions("own,mine", option="--visibility", allowed=SELFPLAY_VISIBILITIES)
    Traceback (most recent call last):
    ...
    ValueError: --visibility takes a comma-separated list of own, both; 'mine' is none of them.
    """
    names = tuple(name.strip() for name in str(text).split(","))
    if not names or "" in names:
        raise ValueError(f"{option} takes a comma-separated list of one or more of {', '.join(allowed)}, got {text!r}.")
    for name in names:
        if name not in allowed:
            raise ValueError(
                f"{option} takes a comma-separated list of {', '.join(allowed)}; {name!r} is none of them."
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{option} names a condition twice in {text!r}; name each once.")
    return names


def plan_matches(
    *,
    model_a: str,
    model_b: str,
    instances: int,
    visibilities: tuple[str, ...] = ("own",),
    descriptions: tuple[str, ...] = ("none",),
) -> list[Match]:
    """Every instance in every cell that differs: 2 per instance for one model, 4 for two; under every condition
    (visibility × description), so each condition plays the same instances in the same cells.

    Model A is the focal player of the cell (``backend.dond.game.cell_roles``).

    >>> [m.game_id for m in plan_matches(model_a="x", model_b="x", instances=1, visibilities=("own", "both"))]
    ['i0-c1', 'i0-c2', 'i0-c1-vboth-dnone', 'i0-c2-vboth-dnone']

    >>> [m.game_id for m in plan_matches(model_a="x", model_b="x", instances=2)]
    ['i0-c1', 'i0-c2', 'i1-c1', 'i1-c2']
    >>> [dict(m.models) for m in plan_matches(model_a="x", model_b="y", instances=1)][2]
    {'B': 'x', 'A': 'y'}
    """
    if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
        raise ValueError(f"The number of instances must be a positive whole number, got {instances!r}.")
    if not model_a or not model_b:
        raise ValueError("Both model names must be given (use 'scripted' to play offline).")
    for visibility in visibilities:
        if problem := visibility_problem(visibility, "self"):
            raise ValueError(problem)
    for description in descriptions:
        if description not in AGENT_DESCRIPTIONS:
            raise ValueError(f"The description must be one of {', '.join(AGENT_DESCRIPTIONS)}, not {description!r}.")
    cells = (1, 2) if model_a == model_b else (1, 2, 3, 4)
    matches = []
    for number in range(instances):
        for visibility in visibilities:
            for description in descriptions:
                for cell in cells:
                    focal, _ = cell_roles(cell)
                    models = ((focal, model_a), (other_role(focal), model_b))
                    matches.append(Match(number, cell, models, visibility, description))
    return matches


def row_prices() -> costs.PriceTable:
    """The running plan's price table (``--prices``), else none (every price unknown)."""
    plan = run_costs.PLAN.get()
    return plan.table if plan is not None else costs.EMPTY_TABLE


def finished_games(out_dir: Path) -> set[str]:
    """The ids of games with a games row; events of other games (interrupted) are removed from the events file. A
    file from before a column was added is rewritten with the column (empty), so the rows appended next line up."""
    what = "the DoND export"
    added = ("llm_cost", "llm_cost_currency")  # columns of issue 37: a folder from before still resumes
    added_events = ("call_cost", "llm_cost_currency", "llm_cached")
    path = out_dir / GAMES_FILE
    rows = runs.read_rows(path, columns=DOND_GAMES_COLUMNS, optional=added, what=what)
    if rows and _header(path) != DOND_GAMES_COLUMNS:
        runs.write_rows(path, rows, columns=DOND_GAMES_COLUMNS)
    games = {row["game_id"] for row in rows}
    events_path = out_dir / EVENTS_FILE
    events = runs.read_rows(events_path, columns=DOND_EVENTS_COLUMNS, optional=added_events, what=what)
    kept = [row for row in events if row["game_id"] in games]
    if len(kept) != len(events) or (events and _header(events_path) != DOND_EVENTS_COLUMNS):
        runs.write_rows(events_path, kept, columns=DOND_EVENTS_COLUMNS)
    return games


def _header(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return next(csv.reader(handle), [])


def pilot_of(out_dir: Path, games: set[str]) -> costs.Measured:
    """What the finished ``games`` of a run folder measured (their ``llm_call`` events: calls and reported tokens),
    for the estimate of the games still to play; a game with a call whose tokens were not reported is left out.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> rows = [dict(game_id="g", kind="llm_call", prompt_tokens=p, completion_tokens=10) for p in (100, 300)]
    >>> runs.write_rows(folder / EVENTS_FILE, rows, columns=DOND_EVENTS_COLUMNS)
    >>> pilot_of(folder, {"g"})
    Measured(units=1, calls=2, prompt_tokens=400, completion_tokens=20)
    """
    path = out_dir / EVENTS_FILE
    per_game: dict[str, list] = {}
    for row in runs.read_rows(path, columns=DOND_EVENTS_COLUMNS, what="the DoND export") if path.exists() else []:
        if row["game_id"] in games and row["kind"] == "llm_call":
            per_game.setdefault(row["game_id"], []).append(row)
    units = [
        dict(
            game_id=game,
            calls=len(calls),
            prompt_tokens=sum(int(float(c["prompt_tokens"])) for c in calls),
            completion_tokens=sum(int(float(c["completion_tokens"])) for c in calls),
        )
        for game, calls in per_game.items()
        if all(c["prompt_tokens"] != "" and c["completion_tokens"] != "" for c in calls)
    ]
    return costs.measure_rows(units, unit_key=["game_id"])


def check_run_settings(out_dir: Path, settings: dict) -> None:
    """Record the run's settings in ``run.json``; a folder holding a run with other settings is refused, so one
    output never mixes games played under different rules (``--instances`` and ``--concurrency`` may change)."""
    path = out_dir / RUN_FILE
    if path.exists():
        earlier = json.loads(path.read_text(encoding="utf-8"))
        changed = sorted(key for key in settings.keys() | earlier.keys() if settings.get(key) != earlier.get(key))
        if changed:
            raise ValueError(
                f"{out_dir} holds a run with other settings ({', '.join(changed)}); pick another --out folder."
            )
    else:
        runs.write_text_atomically(path, json.dumps(settings, indent=2))


async def play_match(
    match: Match,
    *,
    instance: Instance,
    config: GameConfig,
    settings: dict[str, LLMSettings],
    protocol: Protocol,
    on_turn=None,
    **turn_options,
) -> list[dict]:
    """Play one game to its end; returns its events. A game that does not end in a bounded number of turns is
    aborted with the text ``stalled`` (it cannot happen with the game's rules, the bound only guards the loop).

    Each round asks the one role ``GameState.to_act`` names (clembench's order); ``on_turn(events)``, if given, is
    called after each stored move of a model (message, proposal, violation, failed call), for the progress bar.
    ``turn_options`` go to ``llm_turns`` (a test's ``call_model`` that plays stored replies)."""
    events: list[dict] = []
    for _ in range(4 * config.max_messages + 4 * (config.llm_reprompts + 1) + 8):
        state = replay(events, config, counts=instance.counts)
        if state.finished:
            return events
        (role,) = state.to_act
        async for item in llm_turns(
            load_events=lambda: events,
            store_event=events.append,
            instance=instance,
            config=config,
            role=role,
            settings=settings[role],
            stream_reply=False,
            protocol=protocol,
            view=match.view(role),
            **turn_options,
        ):
            if on_turn is not None and item["type"] == "event":
                on_turn(events)
    events.append(system_event("abort", "", "stalled"))
    return events


@dataclass
class RunSummary:
    planned: int
    kept: int
    played: int
    outcomes: dict[str, int]
    seconds: float
    games_path: Path


async def run_selfplay(
    *,
    model_a: str,
    model_b: str,
    instances: int,
    mode: str,
    language: str,
    out_dir: str | Path,
    concurrency: int = 16,
    instance_seed: int = 1,
    max_messages: int = 5,
    llm_reprompts: int = 2,
    protocol: Protocol = PLAIN,
    settings_options: dict | None = None,
    progress: TextIO | None = None,
    visibilities: tuple[str, ...] = ("own",),
    descriptions: tuple[str, ...] = ("none",),
    clembench_exact: bool = False,
) -> RunSummary:
    """Plan, skip finished games, play the rest ``concurrency`` at a time, append rows as games end.

    ``progress`` shows a bar that moves with every turn of every game (a game counts as done when it ends).
    ``clembench_exact`` switches off every departure from clembench (``backend.dond.departures``)."""
    check_mode(mode)
    check_language(language)
    if problem := exact_problem(
        clembench_exact=clembench_exact, protocol_name=protocol.name, probe_external=protocol.probe_external
    ):
        raise ValueError(problem)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive whole number, got {concurrency!r}.")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    matches = plan_matches(
        model_a=model_a,
        model_b=model_b,
        instances=instances,
        visibilities=tuple(visibilities),
        descriptions=tuple(descriptions),
    )
    treatments = {}  # recorded only when set, so a run from before the treatments resumes
    if tuple(visibilities) != ("own",):
        treatments["visibilities"] = list(visibilities)
    if tuple(descriptions) != ("none",):
        treatments["descriptions"] = list(descriptions)
    if clembench_exact:
        treatments["clembench_exact"] = True
    check_run_settings(
        out,
        dict(
            **treatments,
            model_a=model_a,
            model_b=model_b,
            mode=mode,
            language=language,
            instance_seed=instance_seed,
            max_messages=max_messages,
            llm_reprompts=llm_reprompts,
            protocol=protocol.name,
            word_limit=protocol.word_limit,
            probe_external=protocol.probe_external,
            # games before clembench's turn flow asked the non-opener first: such a folder is not resumed
            turn_flow="clembench",
        ),
    )
    done = finished_games(out)
    todo = [match for match in matches if match.game_id not in done]
    pilot = pilot_of(out, done)
    run_costs.use_pilot(
        pilot,
        unit="game",
        calls_per_unit=2 * max_messages + 2,
        why="a game that chats to the end and proposes without mistakes",
        pilot_units=[match for match in matches if (match.game_id,) in pilot.keys],
    )
    options = dict(settings_options or {})
    started = time.monotonic()
    outcomes: dict[str, int] = {}

    async def play(match: Match) -> tuple[list[dict], dict]:
        instance = generate_instance(instance_seed + match.instance_number)
        focal, opener = cell_roles(match.cell)
        config = GameConfig(mode, language, opener, max_messages, llm_reprompts, clembench_exact=clembench_exact)
        models = dict(match.models)
        settings = {role: LLMSettings(model=name, **options) for role, name in models.items()}
        expected = 2 * max_messages + 2  # turns of a game that chats to the end and proposes without mistakes

        def on_turn(events: list[dict]) -> None:
            moves = sum(e["kind"] in ("message", "proposal", "violation", "llm_error") for e in events)
            bar.advance(match.game_id, moves / expected)

        events = await play_match(
            match, instance=instance, config=config, settings=settings, protocol=protocol, on_turn=on_turn
        )
        meta = dict(session_code=SESSION_CODE, game_id=match.game_id)
        row = game_row(
            events,
            instance,
            config,
            **meta,
            opponent="self",
            model=models[focal],
            cell=match.cell,
            focal_role=focal,
            llm_models=models,
            protocol=protocol,
            treatment=match.treatment(),
            prices=row_prices(),
        )
        return event_rows(events, instance, config, **meta, prices=row_prices()), row

    with (
        runs.RowAppender(out / EVENTS_FILE, columns=DOND_EVENTS_COLUMNS) as events_out,
        runs.RowAppender(out / GAMES_FILE, columns=DOND_GAMES_COLUMNS) as games_out,
    ):

        def store(match: Match, rows: tuple[list[dict], dict]) -> str:
            events, row = rows
            events_out.write(events)  # events first, the games row last: the games row marks the game as finished
            games_out.write([row])
            outcomes[row["outcome"]] = outcomes.get(row["outcome"], 0) + 1
            bar.step(row["outcome"], key=match.game_id)
            return row["outcome"]

        # The run's own bar (run_each's, given no stream, stays silent): it moves with every turn, not every game.
        bar = ProgressBar(len(todo), progress)
        bar.show()
        try:
            await runs.run_each(todo, play, concurrency=concurrency, progress=None, on_done=store)
        finally:
            bar.close()
    return RunSummary(len(matches), len(matches) - len(todo), len(todo), outcomes, time.monotonic() - started, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend.dond.selfplay", description=__doc__.splitlines()[0])
    parser.add_argument("--model-a", required=True, help="model name at the endpoint, or 'scripted' (offline)")
    parser.add_argument("--model-b", default=None, help="the other model (default: the same as --model-a)")
    parser.add_argument("--instances", type=int, required=True, help="number of instances to play")
    parser.add_argument("--mode", choices=MODES, default="semi")
    parser.add_argument("--language", choices=LANGUAGES, default="en")
    parser.add_argument("--concurrency", type=int, default=16, help="games played at once")
    parser.add_argument("--out", type=Path, required=True, help="output folder (resumed if it holds a run)")
    parser.add_argument("--instance-seed", type=int, default=1, help="instance k is generate_instance(seed + k)")
    parser.add_argument("--max-messages", type=int, default=5, help="chat messages per player")
    parser.add_argument("--llm-reprompts", type=int, default=2, help="re-prompts after a rule violation")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="plain", help="'notes': a private note per turn")
    parser.add_argument("--word-limit", type=int, default=64, help="word limit stated in the notes protocol")
    parser.add_argument("--probe-external", action="store_true", help="ask each turn what the other would accept")
    parser.add_argument(
        "--clembench-exact",
        action="store_true",
        help="clembench's rules without the project's departures (no re-prompts, no retries, no length limit, "
        "empty messages passed on; see docs/turn-flow.md)",
    )
    parser.add_argument(
        "--visibility",
        default="own",
        help="value visibility conditions, comma-separated: own (each its own values), both (each sees both)",
    )
    parser.add_argument(
        "--describe",
        default="none",
        help="descriptions of model A, comma-separated: none (neutral representative), average, expert, awful",
    )
    add_endpoint_options(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    run_costs.add_cost_options(parser)

    async def start(args: argparse.Namespace, progress: TextIO | None) -> RunSummary:
        protocol = Protocol(args.protocol, args.word_limit, args.probe_external)
        visibilities = conditions(args.visibility, option="--visibility", allowed=SELFPLAY_VISIBILITIES)
        descriptions = conditions(args.describe, option="--describe", allowed=AGENT_DESCRIPTIONS)
        base = settings_from_args(args, model=args.model_a)  # validates the options before anything runs
        return await run_selfplay(
            model_a=args.model_a,
            model_b=args.model_b or args.model_a,
            instances=args.instances,
            mode=args.mode,
            language=args.language,
            out_dir=args.out,
            concurrency=args.concurrency,
            instance_seed=args.instance_seed,
            max_messages=args.max_messages,
            llm_reprompts=args.llm_reprompts,
            protocol=protocol,
            settings_options={name: value for name, value in dataclasses.asdict(base).items() if name != "model"},
            progress=progress,
            visibilities=visibilities,
            descriptions=descriptions,
            clembench_exact=args.clembench_exact,
        )

    def finish(summary: RunSummary, seconds: float) -> int:
        outcomes = ", ".join(f"{count} {outcome}" for outcome, count in sorted(summary.outcomes.items())) or "none"
        print(
            f"{summary.games_path / GAMES_FILE}: {summary.planned} games planned, {summary.kept} kept from before, "
            f"{summary.played} played ({outcomes}) in {summary.seconds:.1f} s."
        )
        games_per_minute = round(60 * summary.played / summary.seconds, 1) if summary.played else 0
        print(json.dumps({"games_per_minute": games_per_minute}))
        return 0

    return runs.run_command(parser, argv, start, finish)


if __name__ == "__main__":
    sys.exit(main())
