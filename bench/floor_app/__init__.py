"""Benchmark floor for bench/annotation_load.py: social_eval's page flow (consent, instructions, one rating page of
28 fields per round, completion) with no logic at all. Not in the product's SESSION_CONFIGS: the bench copies it into
a scratch project whose settings add it (harness/servers.py project_with_app)."""

from otree.api import BaseConstants, BaseGroup, BasePlayer, BaseSubsession, Page, models


class C(BaseConstants):
    NAME_IN_URL = "annotation_floor"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 3  # as social_eval in the bench: 2 regular episodes + 1 gold per annotator


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


def rating_fields():
    """The same 28 names as social_eval's form (backend/social/forms.py): 2 agents x 7 dimensions x (rating, reason)."""
    return [f"{kind}_{agent}_{slot}" for agent in (1, 2) for slot in range(1, 8) for kind in ("rating", "reason")]


class Player(BasePlayer):
    consent_given = models.BooleanField(blank=True)
    rating_1_1 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_1 = models.LongStringField(blank=True)
    rating_1_2 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_2 = models.LongStringField(blank=True)
    rating_1_3 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_3 = models.LongStringField(blank=True)
    rating_1_4 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_4 = models.LongStringField(blank=True)
    rating_1_5 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_5 = models.LongStringField(blank=True)
    rating_1_6 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_6 = models.LongStringField(blank=True)
    rating_1_7 = models.IntegerField(blank=True, min=-10, max=10)
    reason_1_7 = models.LongStringField(blank=True)
    rating_2_1 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_1 = models.LongStringField(blank=True)
    rating_2_2 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_2 = models.LongStringField(blank=True)
    rating_2_3 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_3 = models.LongStringField(blank=True)
    rating_2_4 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_4 = models.LongStringField(blank=True)
    rating_2_5 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_5 = models.LongStringField(blank=True)
    rating_2_6 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_6 = models.LongStringField(blank=True)
    rating_2_7 = models.IntegerField(blank=True, min=-10, max=10)
    reason_2_7 = models.LongStringField(blank=True)


class Consent(Page):
    form_model = "player"
    form_fields = ["consent_given"]

    @staticmethod
    def is_displayed(player):
        return player.round_number == 1


class Instructions(Page):
    @staticmethod
    def is_displayed(player):
        return player.round_number == 1


class Rate(Page):
    form_model = "player"
    form_fields = rating_fields()


class Completion(Page):
    @staticmethod
    def is_displayed(player):
        return player.round_number == C.NUM_ROUNDS


page_sequence = [Consent, Instructions, Rate, Completion]
