from otree.api import Bot, SubmissionMustFail

from . import Consent


class PlayerBot(Bot):
    def play_round(self):
        yield SubmissionMustFail(Consent, dict())
        yield Consent, dict(consent_given=True)
