import html
import time

from otree.api import Bot, SubmissionMustFail, expect

from backend.social import forms as social_forms
from lab_server.otree_internals import db

from . import (
    Assignment,
    C,
    Comprehension,
    Consent,
    Instructions,
    Rate,
    custom_export_qualified,
    custom_export_ratings_long,
)
from .study import player_episode as _player_episode
from .study import root as _root
from .study import rubric as _rubric
from .study import study as _study


def _values(bot, *, miss_gold=False):
    """Valid form values for the bot's current episode: gold references where known, else a fixed pattern."""
    rubric = _rubric(bot.session)
    episode = _player_episode(bot.player)
    values = {}
    for agent_index, agent in enumerate(episode.agents, start=1):
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            if dimension.key in agent.gold_ratings:
                rating = int(agent.gold_ratings[dimension.key])
                if miss_gold:  # beyond the tolerance, on whichever side stays on the scale
                    far = int(bot.session.config["gold_tolerance"]) + 1
                    rating = rating + far if rating + far <= dimension.max else rating - far
            else:
                rating = dimension.min + (bot.participant.id_in_session + slot + agent_index) % (
                    dimension.max - dimension.min + 1
                )
            values[social_forms.rating_field(agent_index, slot)] = rating
            values[social_forms.reason_field(agent_index, slot)] = (
                f"{agent.name} on {dimension.key}: bot reasoning, line one.\nLine two <b>kept</b>."
            )
    return values


def _must_fail_cases(bot, values):
    """Every out-of-range rating, a non-integer rating, empty, too-short and too-long reasoning."""
    rubric = _rubric(bot.session)
    min_chars = int(bot.session.config["min_reasoning_chars"])
    for agent in social_forms.AGENTS:
        for slot, dimension in enumerate(rubric.dimensions, start=1):
            field = social_forms.rating_field(agent, slot)
            for wrong in (dimension.min - 1, dimension.max + 1):
                yield SubmissionMustFail(Rate, {**values, field: wrong}, error_fields=[field])
    first_rating, first_reason = social_forms.rating_field(1, 1), social_forms.reason_field(1, 1)
    yield SubmissionMustFail(Rate, {**values, first_rating: "3.5"}, error_fields=[first_rating])
    yield SubmissionMustFail(Rate, {**values, first_reason: ""}, error_fields=[first_reason])
    yield SubmissionMustFail(Rate, {**values, first_reason: "   "}, error_fields=[first_reason])
    yield SubmissionMustFail(Rate, {**values, first_reason: "x" * (min_chars - 1)}, error_fields=[first_reason])
    too_long = "x" * (social_forms.MAX_REASONING_CHARS + 1)
    yield SubmissionMustFail(Rate, {**values, first_reason: too_long}, error_fields=[first_reason])


def _check_session(bot):
    """Assignment invariants: no one rates an episode twice, none gets more than k; all k once everyone is done."""
    root, config = _root(bot.player), bot.session.config
    k = int(config["annotators_per_episode"])
    done = [row for row in Assignment.filter(subsession=root) if row.status == "done"]
    pairs = [(row.participant_code, row.item_id) for row in done]
    expect(len(pairs), "==", len(set(pairs)))
    regular_ids = _study(bot.session)["regular_ids"]
    counts = {item: sum(1 for row in done if row.item_id == item) for item in regular_ids}
    expect(max(counts.values(), default=0), "<=", k)
    participants = bot.session.get_participants()
    finished = all(
        p.vars.get("screened_out")
        or p.vars.get("social_eval_over")
        or p.vars.get("social_eval_done", 0) == len(p.vars.get("social_eval_plan", [None]))
        for p in participants
    )
    capacity = len(participants) * int(config["episodes_per_annotator"])
    if finished and not config.get("qualification_mode") and capacity >= k * len(regular_ids):
        expect(sorted(set(counts.values())), "==", [k])
        print(f"social_eval coverage check: {len(regular_ids)} episodes x {k} annotators, no duplicates")


class PlayerBot(Bot):
    # Case "expiry": participant 1 leaves its first conversation open past the reservation timeout while other
    # annotators finish it; its late submission must be refused and it must get another conversation.
    cases = ["basic", "expiry"]

    def play_round(self):
        config = self.session.config
        if self.round_number == 1:
            yield from self._introduction()
        if self.participant.vars.get("screened_out"):
            return
        if self.participant.vars.get("social_eval_nothing_left"):
            expect("nothing left", "in", self.html)
            yield from ()
            return
        if self.player.episode_id:
            yield from self._rate()
        if self.round_number == C.NUM_ROUNDS:
            _check_session(self)
            self._check_exports()
        if config.get("qualification_mode") and self.round_number == C.NUM_ROUNDS:
            players = [p for s in self.subsession.in_rounds(1, C.NUM_ROUNDS) for p in s.get_players()]
            header, *rows = custom_export_qualified(players)
            by_participant = {
                row["participant_code"]: row for row in (dict(zip(header, row, strict=True)) for row in rows)
            }
            expect(by_participant[self.participant.code]["qualified"], "==", 1)

    def _introduction(self):
        config = self.session.config
        if config.get("consent", True):
            yield Consent, dict(consent_given=True)
        expect("Annotation examples for <span data-material>Believability</span>", "in", self.html)
        expect("A pizza", "not in", self.html)  # our own examples, not the seed's
        yield Instructions
        if config.get("comprehension_check"):
            questions = _rubric(self.session).comprehension
            right = {f"quiz_{n}": q.answer for n, q in enumerate(questions, start=1)}
            wrong = {name: (answer + 1) % 2 for name, answer in right.items()}
            yield SubmissionMustFail(Comprehension, wrong)  # first failure: try again
            if self.participant.id_in_session == 2:
                yield Comprehension, wrong  # second failure: screened out
                expect(self.participant.vars.get("screenout_reason"), "==", "failed_comprehension")
                expect("cannot continue", "in", self.html)
                return
            yield Comprehension, right

    def _rate(self):
        seen = [p.episode_id for p in self.player.in_previous_rounds() if p.episode_id]
        expect(self.player.episode_id, "not in", seen)
        episode = _player_episode(self.player)
        expect(html.escape(episode.scenario), "in", self.html)
        expect(f'name="{social_forms.rating_field(2, 4)}"', "in", self.html)
        expect(f'minlength="{self.session.config["min_reasoning_chars"]}"', "in", self.html)
        expect('data-min="-5" data-max="5"', "in", self.html)  # relationship: both ends explicit
        miss_gold = self.player.is_gold and self.participant.id_in_session == 2 and self.case == "basic"
        values = _values(self, miss_gold=miss_gold and not self.session.config.get("qualification_mode"))
        if self.round_number == 1:
            yield from _must_fail_cases(self, values)
            # (with more annotators, others may hold the same episodes: the scenario needs a two-person session)
            if self.case == "expiry" and not self.player.is_gold and len(self.session.get_participants()) == 2:
                if self.participant.id_in_session == 1:
                    values = yield from self._expire_and_reassign(values)
                else:
                    self._expire_only()  # nobody else took it meanwhile: the late submission still counts
        yield Rate, values
        expect(self.player.submitted_at, ">", 0)
        expect(self.player.seconds_spent, ">=", 0)
        if self.player.is_gold:
            expect(self.player.attention_passed, "==", not miss_gold)

    def _expire_only(self):
        (mine,) = [
            r
            for r in Assignment.filter(subsession=_root(self.player), participant_code=self.participant.code)
            if r.item_id == self.player.episode_id
        ]
        mine.reserved_at = time.time() - float(self.session.config["reservation_timeout_s"]) - 5
        db.commit()  # as the request of another annotator would: the server's next request sees it stored

    def _expire_and_reassign(self, values):
        root, config = _root(self.player), self.session.config
        first = self.player.episode_id
        (mine,) = [
            r for r in Assignment.filter(subsession=root, participant_code=self.participant.code) if r.item_id == first
        ]
        mine.reserved_at = time.time() - float(config["reservation_timeout_s"]) - 5
        for other in range(int(config["annotators_per_episode"])):
            Assignment.create(
                subsession=root,
                item_id=first,
                participant_code=f"someone-else-{other}",
                status="done",
                reserved_at=time.time(),
                finished_at=time.time(),
                round_number=1,
                is_gold=False,
            )
        db.commit()  # others' finished ratings, committed by their own requests
        yield SubmissionMustFail(Rate, values)
        db.expire_all()  # this bot's database session still holds the rows it changed above
        expect("given to someone else", "in", self.html)
        expect(self.player.episode_id, "!=", first)
        (mine,) = [
            r for r in Assignment.filter(subsession=root, participant_code=self.participant.code) if r.item_id == first
        ]
        expect(mine.status, "==", "released")
        return _values(self)

    def _check_exports(self):
        players = [p for s in self.subsession.in_rounds(1, C.NUM_ROUNDS) for p in s.get_players()]
        rows = list(custom_export_ratings_long(players))
        header, body = rows[0], rows[1:]
        mine = [r for r in body if r[header.index("annotator")] == self.participant.code]
        rated = [p for p in self.player.in_all_rounds() if p.field_maybe_none("submitted_at")]
        expect(len(mine), "==", 14 * len(rated))
        for row in mine:
            reasoning = row[header.index("reasoning")]
            expect("\n", "not in", reasoning)
            expect("\\n", "in", reasoning)
