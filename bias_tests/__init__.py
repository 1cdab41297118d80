from otree.api import *

from backend import study_flow

doc = """
bias_tests: placeholder app of the foundation (entry and exit flow only); its issue builds the task.
"""


class C(BaseConstants):
    NAME_IN_URL = "bias_tests"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    consent_given = models.BooleanField(label="", widget=widgets.RadioSelect)


# FUNCTIONS
def consent_given_choices(player: Player):
    return study_flow.consent_choices(player.session.config.get("language"))


# PAGES
class Consent(study_flow.ConsentPage, Page):
    pass


class ScreenOut(study_flow.ScreenOutPage, Page):
    pass


class Completion(study_flow.CompletionPage, Page):
    pass


page_sequence = [Consent, ScreenOut, Completion]
