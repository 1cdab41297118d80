import html

from otree.api import Bot, SubmissionMustFail, expect

from backend.bias.items import ATTENTION_CHECK, CONTROL, TREATMENT

from . import Arguments, Choice, Consent, Instructions, presented

# Every participant answers every test; participant 3 fails the attention check (the report counts it). The first
# choice page (round 1) and the first argument page first try the submissions that must be refused.


class PlayerBot(Bot):
    def play_round(self):
        if self.round_number == 1:
            yield SubmissionMustFail(Consent, dict())
            yield Consent, dict(consent_given=True)
            yield Instructions
        if not self.player.field_maybe_none("item_id"):
            return  # the plan is shorter than the app's rounds: nothing is shown
        item, view = presented(self.player)
        for paragraph in view.paragraphs:
            expect(html.escape(paragraph), "in", self.html)
        if item.bias == "anchoring":
            expect(html.escape(item.anchor_sentence), "in" if view.version == TREATMENT else "not in", self.html)
        if item.bias == "halo":
            expect(html.escape(item.treatment_sentence), "in" if view.version == TREATMENT else "not in", self.html)
        if view.kind == "arguments":
            yield from self.select_arguments(view)
        else:
            yield from self.choose(item, view)

    def choose(self, item, view):
        number = self.participant.id_in_session
        ask_confidence = self.session.config.get("ask_confidence", True)
        choice = (number + self.round_number) % len(view.options)
        if item.bias == ATTENTION_CHECK:
            correct = [option.label for option in view.options].index(item.correct)
            choice = correct if number != 3 else (correct + 1) % len(view.options)
        data = dict(choice=choice)
        if ask_confidence:
            data["confidence"] = (number * 17 + self.round_number * 7) % 101
        if self.round_number == 1:
            expect(self.player.version, CONTROL)
            yield SubmissionMustFail(Choice, {key: value for key, value in data.items() if key != "choice"})
            yield SubmissionMustFail(Choice, dict(data, choice=len(view.options)))
            if ask_confidence:
                yield SubmissionMustFail(Choice, dict(choice=choice))
                yield SubmissionMustFail(Choice, dict(choice=choice, confidence=101))
                yield SubmissionMustFail(Choice, dict(choice=choice, confidence=-1))
        yield Choice, data
        expect(self.player.answer, float(view.options[choice].value))
        if ask_confidence:
            expect(self.player.confidence, data["confidence"])
        if item.bias == ATTENTION_CHECK:
            expect(self.player.is_correct, number != 3)

    def select_arguments(self, view):
        offered = [argument.id for argument in view.arguments]
        for argument in view.arguments:
            expect(html.escape(argument.text), "in", self.html)
        plan = self.participant.vars["bias_plan"]
        first_argument_round = 1 + next(
            index for index, (item_id, version) in enumerate(plan) if version == TREATMENT and item_id == view.item_id
        )
        if self.round_number == first_argument_round:
            yield SubmissionMustFail(Arguments, dict(selected_arguments=""))
            yield SubmissionMustFail(Arguments, dict(selected_arguments=f"{offered[0]},not_offered"))
            yield SubmissionMustFail(Arguments, dict(selected_arguments=f"{offered[0]},{offered[0]}"))
        start = self.participant.id_in_session % 4
        chosen = offered[start : start + 3]
        yield Arguments, dict(selected_arguments=",".join(chosen))
        expect(self.player.pro_selected + self.player.con_selected, 3)
