from otree.api import Bot

from . import Consent


class PlayerBot(Bot):
    def play_round(self):
        yield Consent, dict(consent_given=True)
