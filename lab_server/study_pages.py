"""The researcher's side of a whole study, behind oTree's admin login: links to test it, a launch check, paying and
reviewing (rules in ``backend/core/prolific.py``, ``launch_check.py`` and ``workload.py``).

- ``/StudyLinks/<session code>``: the study URL to paste on Prolific (with ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}``
  and ``{{%SESSION_ID%}}``), a button that opens the study as a *test participant*, and why the session-wide
  ``/join`` link needs a PID. oTree's room page shows the same URL and links here (``get_room_shared_context``).
- ``/TestParticipant/<session code>`` (POST, with oTree's CSRF token): makes a fresh Prolific-shaped PID, gives it the
  session's next free place, marked as a test (``participant.vars[study_flow.test_data.TEST_VAR]``), and sends the
  browser through the study's real link (room welcome page, entry checks) with that PID. The place is marked visited
  before the redirect, so no real participant can be handed it in between.
- ``/LaunchCheck/<session code>`` (``?format=json`` for ``python -m backend launch-check``): what would hurt the
  study, each finding with its severity and fix; it makes one
  real model call for configs with a model (at most ``CHECK_TIMEOUT_S`` seconds, no retries: oTree holds its page
  lock during an admin request, so other pages wait that long).
- ``/BonusFile/<session code>`` and ``/ReviewList/<session code>``: Prolific's bulk-bonus lines (text) and the review
  list (CSV through the spreadsheet-safe writer), test participants left out.

The routes are added like ``admin_pages``' (first request through oTree's outermost middleware).
"""

from __future__ import annotations

import csv
import functools
import io
import time
from collections.abc import Callable

import lab_server.admin_pages as admin_pages
import lab_server.otree_internals as otree_internals
from backend.core import cost_check, launch_check, prolific, room_check, workload
from study_flow import pay, test_data
from study_flow.workload import currency

CHECK_TIMEOUT_S = 10.0
TEST_STUDY_ID = "test_link"


def _host(request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def room_configs(room_name: str) -> tuple[str, ...] | None:
    from .creation import configs_of_rooms

    found = configs_of_rooms().get(room_name)
    return tuple(found) if found is not None else None


def entry_url(session, pid: str) -> str:
    """Where a participant with ``pid`` enters ``session``: its room's link, else its session-wide link."""
    from urllib.parse import urlencode

    room = session.get_room()
    query = dict(participant_label=pid, STUDY_ID=TEST_STUDY_ID, SESSION_ID=prolific.fresh_test_pid())
    if room is not None:
        return f"/room/{room.name}?{urlencode(query)}"
    return f"/join/{session._anonymous_code}?{urlencode(query)}"


def take_test_place(session):
    """Give the session's next free place to a fresh test PID; (participant, pid), or (None, "") when it is full."""
    participant = session.pp_set.filter_by(visited=False).order_by("id").first()
    if participant is None:
        return None, ""
    pid = prolific.fresh_test_pid()
    participant.visited = True  # taken now: oTree hands out only unvisited places to everyone else
    participant.set_label(pid)
    participant.vars[test_data.TEST_VAR] = True
    return participant, pid


def study_links(session, request) -> dict:
    room = session.get_room()
    return dict(
        prolific_url=prolific.study_url(_host(request), room=room.name) if room is not None else "",
        room_name=room.name if room is not None else "",
        join_url=f"{_host(request)}/join/{session._anonymous_code}",
        id_format=session.config.get("participant_id_format") or "prolific",
        free_places=session.pp_set.filter_by(visited=False).count(),
        is_demo=bool(session.is_demo),
    )


def people(session, now: float) -> list[dict]:
    """Everyone who took a place (tests left out): PID, status, reason and bonus in the study's currency."""
    by_code = {p.code: p for p in session.get_participants()}
    rows, _ = admin_pages.participant_rows(session, now)
    found = []
    for row in rows:
        participant = by_code[row["code"]]
        if test_data.is_test(participant):
            continue
        amount, stored = pay.bonus(participant, session)  # the amount their page stated, never recomputed
        found.append(
            dict(
                prolific_pid=row["pid"] if row["pid"] != "—" else "",
                status=row["status"],
                reason=row["detail"],
                screened_out=bool(participant.vars.get("screened_out")),
                bonus=amount,
                bonus_stored=stored,
                code_shown=participant.vars.get(pay.CODE_SHOWN),
                per_point_shown=(participant.vars.get(pay.PAY_SHOWN) or {}).get("per_point") if stored else None,
                fee_shown=pay.stated_fee(participant),  # the participation fee their consent page stated
                participant_code=row["code"],
                session_code=session.code,
            )
        )
    return found


def pay_and_review(session, now: float) -> dict:
    everyone = people(session, now)
    lines, notes = prolific.bonus_lines(everyone)
    config = session.config
    codes = dict(completion_code=config.get("completion_code") or "", screenout_code=config.get("screenout_code") or "")
    return dict(
        bonus_lines=lines,
        bonus_notes=notes,
        review=[prolific.review_row(person, **codes) for person in everyone],
        pay_sources=pay.summary(everyone, per_point=config.get("real_world_currency_per_point"))
        + pay.fee_summary([person["fee_shown"] for person in everyone], current=config.get("participation_fee")),
        currency=currency(),
        total=str(sum((prolific.money(line.split(",")[1]) for line in lines), prolific.money(0))),
    )


def finished_durations(session) -> list[float]:
    """Seconds from the first to the last page of every finished participant who is not a test (a pilot's times)."""
    import datetime as dt

    found = []
    for participant in session.get_participants():
        started, last = participant.time_started_utc, participant._last_page_timestamp
        if not participant.vars.get("completed") or test_data.is_test(participant) or not started or not last:
            continue
        try:
            began = dt.datetime.fromisoformat(str(started)).replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue  # a start time oTree did not write: leave it out rather than guess
        found.append(max(0.0, last - began))
    return found


def home_holder(config_name: str, session_code: str) -> tuple[str, str] | None:
    """(room, session code) when the room of ``config_name`` holds a session other than ``session_code``."""
    from .creation import configs_of_rooms
    from .otree_internals import ROOM_DICT

    for name, configs in configs_of_rooms().items():
        room = ROOM_DICT.get(name)
        held = room.get_session() if config_name in configs and room is not None else None
        if held is not None and held.code != session_code:
            return name, held.code
    return None


def _record(session, key: str) -> dict | None:
    found = (session.vars or {}).get(key)
    return found if isinstance(found, dict) else None  # anything else was not written by creation: not read


CHAIN_LIMIT = 50  # takeovers of one room read at most (a room made again and again); more is not read


def _session_of(code) -> object | None:
    from .otree_internals import Session

    return Session.objects_filter(code=code).first() if isinstance(code, str) and code else None


def takeover_chain(session) -> list[dict]:
    """The room's takeovers behind ``session``, newest first: the record it wrote when it took its room
    (``ROOM_TAKEN_FROM``), then the record the session it took the room from had written when that one took it, and
    so on back; each with ``working_now``, that session's people still working, counted now (the recorded counts stay
    as written). A session no longer on the server (``gone``) ends the chain; so does a record of another room, or a
    loop back to a session already read (``loop`` on the last record read), which creation never writes."""
    import lab_server.creation as creation

    chain: list[dict] = []
    seen = {session.code}
    record = _record(session, creation.ROOM_TAKEN_FROM)
    room = record.get("room") if record else None
    while record is not None and len(chain) < CHAIN_LIMIT and record.get("room") == room:
        code = record.get("session")
        if code in seen:
            if chain:
                chain[-1] = dict(chain[-1], loop=True)
            break
        seen.add(code)
        earlier = _session_of(code)
        if earlier is None:
            chain.append(dict(record, gone=True))
            break
        chain.append(dict(record, working_now=creation.session_counts(earlier)["working"]))
        record = _record(earlier, creation.ROOM_TAKEN_FROM)
    return chain


def later_takers(session) -> list[str]:
    """The sessions a room passed to after the one that took it from ``session`` (``ROOM_TAKEN_BY``), oldest
    first, by each one's own record; read as far as the records go (at most ``CHAIN_LIMIT``, never in a loop)."""
    import lab_server.creation as creation

    found: list[str] = []
    record = _record(session, creation.ROOM_TAKEN_BY)
    seen = {session.code}
    while record is not None and len(found) < CHAIN_LIMIT:
        code = record.get("session")
        holder = _session_of(code) if code not in seen else None
        if holder is None:
            break
        seen.add(code)
        record = _record(holder, creation.ROOM_TAKEN_BY)
        if record is not None and isinstance(record.get("session"), str) and record.get("session") not in seen:
            found.append(record["session"])
    return found


def holder_now(room_name) -> str | None:
    """The code of the session ``room_name`` holds now ("" for none), read live; None for a room not configured."""
    from .otree_internals import ROOM_DICT

    room = ROOM_DICT.get(room_name) if isinstance(room_name, str) else None
    if room is None:
        return None
    held = room.get_session()
    return held.code if held is not None else ""


LAUNCH_FACTS: dict[str, Callable] = {}  # app -> facts_of(session, facts): registered by the app


def register_launch_facts(app: str, facts_of: Callable) -> None:
    """An app adds to the launch check's facts of its sessions: ``facts_of(session, facts)`` fills
    ``facts["material"]`` (name -> language), ``facts["unit_config"]`` and ``facts["coverage"]`` (``items``,
    ``per_item``, ``per_person``, ``unit``). Called when the app is imported."""
    LAUNCH_FACTS[app] = facts_of


def session_facts(session) -> dict:
    """What the launch check needs from a session, apart from the model call."""
    import lab_server.creation as creation
    from study_flow import test_data

    config = session.config
    apps = list(config.get("app_sequence") or [])
    app = apps[0] if apps else ""
    room = session.get_room()
    # Places a tester took (a test link) are no place for the study (study_flow.test_data, the one rule); in a demo
    # session everyone is a test and every place counts, as the reports keep its rows.
    testers = 0 if test_data.is_test_session(session) else len(test_data.codes_of_testers(session))
    facts = dict(
        config=config,
        app=app,
        places=session.num_participants - testers,
        testers=testers,
        room=room.name if room is not None else None,
        material={},
        coverage=None,
        unit_config=dict(config),
        durations_s=finished_durations(session),
        two_people=app == "dond" and config.get("opponent") == "human",
        taken_from=_record(session, creation.ROOM_TAKEN_FROM),
        taken_by=_record(session, creation.ROOM_TAKEN_BY),
        home_holder=home_holder(str(config.get("name") or ""), session.code) if room is None else None,
    )
    # A room may change hands again and again: the chain behind this session (records) and who holds the room now.
    if room is not None and facts["taken_from"] is not None:
        chain = takeover_chain(session)
        facts["taken_from"], facts["earlier"] = (chain[0], chain[1:]) if chain else (facts["taken_from"], [])
    if room is None and facts["taken_by"] is not None:
        facts["later"] = later_takers(session)
        facts["holder_now"] = holder_now(facts["taken_by"].get("room"))
    if app in LAUNCH_FACTS:  # what the app adds: its material's language, the coverage of its items
        LAUNCH_FACTS[app](session, facts)
    facts["model_costs"] = model_costs(session, facts["places"])
    return facts


def model_costs(session, places: int) -> dict | None:
    """The estimate, spending and cap of the session's model calls (``study_flow.spending``), or a problem's words."""
    from study_flow import spending

    try:
        return spending.launch_facts(session, places)
    except ValueError as error:  # a price table gone or broken since creation
        return dict(problem=str(error))


async def model_result(config) -> dict | None:
    """One real, short call to the config's model (None for a config without one, or the offline scripted agent)."""
    from backend.core.llm import LLMSettings, complete

    model = str(config.get("llm_model") or "")
    if not model or model == "scripted":
        return None
    settings = LLMSettings.from_config(config, timeout_s=CHECK_TIMEOUT_S, max_retries=0)
    started = time.monotonic()
    record = await complete([dict(role="user", content="Reply with the word: ready")], settings, max_tokens=16)
    return dict(
        model=model,
        served=record.extra.get("served_model"),
        latency_s=time.monotonic() - started,
        error=record.error,
    )


def findings(facts: dict, model: dict | None, *, floor_per_hour: float | None, currency: str) -> list[dict]:
    """Every finding of the launch check for a session's (or a config's) facts."""
    config, app = facts["config"], facts["app"]
    can_screen_out = bool(config.get("consent", True)) or bool(config.get("comprehension_check"))
    found = launch_check.codes_findings(
        completion_code=str(config.get("completion_code") or ""),
        screenout_code=str(config.get("screenout_code") or ""),
        can_screen_out=can_screen_out,
    )
    if model is not None:
        found += launch_check.model_findings(**model)
    found += launch_check.language_findings(language=str(config.get("language") or "en"), material=facts["material"])
    places = []
    if facts["coverage"]:
        places += launch_check.places_findings(places=facts["places"], **facts["coverage"])
    places += launch_check.pairing_findings(places=facts["places"], two_people=bool(facts.get("two_people")))
    if facts.get("testers"):
        for item in places:
            item["what"] += f" ({facts['testers']} place(s) taken by test participants are not counted.)"
    found += places
    if app in workload.TIME_LIMITS:
        found += launch_check.time_limit_findings(
            limits=workload.time_limits(app, config),
            unit_s=workload.DEFAULT_SECONDS[app],
            unit=workload.UNIT_NAMES[app],
        )
    if facts.get("two_people") and app in workload.PARTNER_LIMITS:
        found += launch_check.partner_limit_findings(
            limits=workload.partner_limits(app, config),
            message_s=workload.MESSAGE_S[app],
            heartbeats_s=facts.get("heartbeats_s") or {},
            start_s=workload.START_S,
        )
    if app in workload.DEFAULT_SECONDS:
        minutes, source = workload.estimate_minutes(app, facts["unit_config"])
        if config.get("estimated_minutes"):  # the researcher's figure (e.g. from a pilot) is what participants read
            minutes, source = int(config["estimated_minutes"]), f"estimated_minutes (default times say {minutes} min)"
        measured = workload.measured_minutes(facts.get("durations_s") or [])
        if measured is not None:  # Prolific judges pay on the median time of those who finished
            n = len(facts["durations_s"])
            minutes, source = measured, f"the median of {n} finished participants (participants read {minutes} min)"
        pay = float(config.get("participation_fee") or 0)
        for item in launch_check.pay_findings(
            minutes=minutes, pay=pay, currency=currency, floor_per_hour=floor_per_hour
        ):
            item["what"] += f" Duration from {source}."
            found.append(item)
    if facts.get("model_costs"):
        found += cost_check.cost_findings(**facts["model_costs"])
    found += room_check.room_findings(
        room=facts["room"],
        config=str(config.get("name") or ""),
        room_configs=room_configs(facts["room"]) if facts["room"] else None,
        taken_by=facts.get("taken_by"),
        taken_from=facts.get("taken_from"),
        home_holder=facts.get("home_holder"),
        earlier=facts.get("earlier"),
        later=facts.get("later"),
        holder_now=facts.get("holder_now"),
    )
    order = launch_check.SEVERITIES
    return sorted(found, key=lambda item: order.index(item["severity"]))


def floor_of(config) -> float | None:
    value = config.get("min_pay_per_hour")
    return float(value) if value else None


def _csv_text(rows: list[dict], columns) -> str:
    from backend.core.csvio import neutralise_row

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns))
    writer.writeheader()
    for row in rows:
        writer.writerow(neutralise_row(row))
    return out.getvalue()


@functools.cache
def views() -> tuple[type, ...]:
    """The admin views, made on first use (oTree's view classes can be imported only inside a project)."""
    from starlette.responses import JSONResponse, RedirectResponse, Response

    base = otree_internals.AdminSessionPage

    class StudyLinks(base):
        def get_template_name(self):
            return "admin/StudyLinks.html"

        def vars_for_template(self):
            return study_links(self.session, self.request)

    class TestParticipant(base):
        def get(self, request, **kwargs):
            return self.redirect("StudyLinks", code=self.session.code)

        def post(self, request, **kwargs):
            participant, pid = take_test_place(self.session)
            if participant is None:
                return Response("Every place of this session is taken: add participants or make a new session.", 409)
            return RedirectResponse(entry_url(self.session, pid), status_code=303)

    class LaunchCheck(base):
        def get_template_name(self):
            return "admin/LaunchCheck.html"

        async def get(self, request, **kwargs):
            facts = session_facts(self.session)
            model = await model_result(self.session.config)
            found = findings(facts, model, floor_per_hour=floor_of(self.session.config), currency=currency())
            if request.query_params.get("format") == "json":  # python -m backend launch-check
                return JSONResponse(dict(session=self.session.code, worst=launch_check.worst(found), findings=found))
            context = self.get_context_data(
                findings=found, worst=launch_check.worst(found), checked=time.strftime("%H:%M:%S UTC", time.gmtime())
            )
            return self.render_to_response(context)

    class PayAndReview(base):
        def get_template_name(self):
            return "admin/PayAndReview.html"

        def vars_for_template(self):
            return pay_and_review(self.session, time.time())

    class BonusFile(base):
        def get(self, request, **kwargs):
            lines = pay_and_review(self.session, time.time())["bonus_lines"]
            return _download("\n".join(lines) + ("\n" if lines else ""), f"bonus-{self.session.code}.txt")

    class ReviewList(base):
        def get(self, request, **kwargs):
            review = pay_and_review(self.session, time.time())["review"]
            return _download(_csv_text(review, prolific.REVIEW_COLUMNS), f"review-{self.session.code}.csv")

    def _download(text: str, name: str):
        return Response(
            text,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    found = (StudyLinks, TestParticipant, LaunchCheck, PayAndReview, BonusFile, ReviewList)
    auth_level = getattr(otree_internals.otree_settings, "AUTH_LEVEL", None)
    for view in found:
        view._requires_login = auth_level in ("STUDY", "DEMO")
    return found


def _room_context(original):
    @functools.wraps(original)
    def get_room_shared_context(room, request):

        context = original(room, request)
        session = room.get_session()
        context["prolific_url"] = prolific.study_url(_host(request), room=room.name)
        context["room_configs"] = ", ".join(room_configs(room.name) or ())
        context["room_session_code"] = session.code if session is not None else ""
        chain = takeover_chain(session) if session is not None else []
        context["room_taken_from"] = ""
        if any(launch_check.live_study(record) for record in chain):  # the room's page says it as loudly as the check
            context["room_taken_from"] = (
                f"This session took the room from {room_check.takeover_words(chain)}: new arrivals come here now. "
                "See the Launch check."
            )
        return context

    return get_room_shared_context


def only_room_configs(room_name: str, choices: list, configs: list) -> tuple[list, list]:
    """The Create-session form of a room offers only the room's configs (``settings.ROOM_CONFIGS``): (select
    choices as (name, label), configs as dicts with a name). A room tied to no configs keeps them all.

    >>> only_room_configs("bias_study", [("dond_llm", "D"), ("bias_tests", "B")], [{"name": "bias_tests"}])
    ([('bias_tests', 'B')], [{'name': 'bias_tests'}])
    """
    allowed = room_configs(room_name)
    if allowed is None:
        return list(choices), list(configs)
    return [c for c in choices if c[0] in allowed], [c for c in configs if c["name"] in allowed]


def _room_form(get_context_data):
    @functools.wraps(get_context_data)
    def get_context_data_of_the_room(self, **kwargs):
        context = get_context_data(self, **kwargs)
        form = context.get("form")
        field = getattr(form, "session_config", None)
        choices, configs = only_room_configs(
            self.room_name, list(getattr(field, "choices", None) or []), list(context.get("configs") or [])
        )
        if field is not None:
            field.choices = choices
        context["configs"] = configs
        return context

    return get_context_data_of_the_room


def _production() -> bool:
    return bool(getattr(otree_internals.otree_settings, "IS_PRODUCTION", False))  # settings.py's, as oTree loaded it


def _login_lands_on_sessions(form_valid):
    """A production server's admin lands on Sessions after login, not on the Demo page, one click from a demo session
    in the study's database (the demo and the development server keep oTree's landing)."""

    @functools.wraps(form_valid)
    def form_valid_then_sessions(self, form):
        response = form_valid(self, form)  # sets the login cookie
        return self.redirect("Sessions") if _production() else response

    return form_valid_then_sessions


def _root_lands_on_sessions(get):
    @functools.wraps(get)
    async def root(self, request):
        if _production():
            from starlette.responses import RedirectResponse

            return RedirectResponse(request.url_for("Sessions"), status_code=302)
        return await get(self, request)

    return root


def add_routes(app) -> None:
    if app is None or getattr(app, "lab_study_pages", False):
        return
    from starlette.routing import Route

    for view in views():
        app.router.routes.insert(0, Route(view.url_pattern(), view, name=view.__name__, methods=["GET", "POST"]))
    # The server's root (/) redirects as the login does; oTree's urls module exists only once its app is built.
    otree_internals.replace("otree.urls:HomeRedirect.get", _root_lands_on_sessions)
    app.lab_study_pages = True


def install() -> None:
    from .otree_internals import around_app, replace

    replace("otree.views.room:get_room_shared_context", _room_context)
    replace("otree.views.room:RoomWithoutSession.get_context_data", _room_form)
    replace("otree.views.admin:Login.form_valid", _login_lands_on_sessions)

    async def routing(app, scope, receive, send):
        if scope["type"] == "http":
            add_routes(scope.get("app"))
        await app(scope, receive, send)

    around_app(routing)
