from otree.api import Bot, SubmissionMustFail, expect

from backend.reasoning.logs import confusion_label
from backend.reasoning.task import sentence_index

from . import Consent, Instructions, Judge
from .study import load_player_log, settings_of

# The bots' verdicts (orig_cor, fin_cor) on the sample logs; judge 3 is harsh on 1002, so that the export holds all
# four con_mat cells: TP (1002, 1004), FP (1002 by judge 3), FN (1006: correct, but the check failed), TN (others).
VERDICTS = {
    "demo-reasoner_pd_p1_1_5_0_3_0_1001.txt": (0, 1),
    "demo-reasoner_sh_p1_1_3_0_5_0_1002.txt": (1, 1),
    "demo-reasoner_hd_p1_0_5_1_3_0_1003.txt": (0, 1),
    "demo-reasoner_pd_p1_1_5_0_3_1_1004.txt": (1, 1),
    "demo-reasoner_sh_p1_1_3_0_5_1_1005.txt": (0, 0),
    "demo-reasoner_hd_p1_0_5_1_3_1_1006.txt": (1, 1),
}
HARSH_ON = ("demo-reasoner_sh_p1_1_3_0_5_0_1002.txt", 3)


class PlayerBot(Bot):
    def play_round(self):
        if self.round_number == 1:
            if self.session.config.get("consent", True):
                yield Consent, dict(consent_given=True)
            expect("Stag Hunt", "in", self.html)
            yield Instructions
        if not self.player.field_maybe_none("log_file"):
            return  # every log has its judges, or this judge reached logs_per_judge: the page was skipped
        log = load_player_log(self.player)
        sentences = list(sentence_index(log))
        for row in settings_of(self.session).games[self.player.game].table():  # the game's matrix is on the page
            expect(row["label"], "in", self.html)
            expect(row["cells"][1], "in", self.html)
        expect('data-id="f0"', "in", self.html)
        orig_cor, fin_cor = VERDICTS.get(self.player.log_file, (1, 1))
        if (self.player.log_file, self.participant.id_in_session) == HARSH_ON:
            orig_cor = fin_cor = 0
        data = dict(orig_cor=orig_cor, remarks="bot judge\nsecond line")
        if len(log.attempts) > 1:
            data["fin_cor"] = fin_cor
        if self.round_number == 1:
            yield SubmissionMustFail(
                Judge, {**data, "orig_cor": 0, "fin_cor": 0, "err_type": "", "marked_sentences": ""}
            )
            yield SubmissionMustFail(
                Judge, {**data, "orig_cor": 0, "fin_cor": 0, "err_type": "pa", "marked_sentences": ""}
            )
            yield SubmissionMustFail(
                Judge, {**data, "orig_cor": 1, "fin_cor": 1, "err_type": "pa", "marked_sentences": ""}
            )
            yield SubmissionMustFail(
                Judge, {**data, "orig_cor": 0, "fin_cor": 0, "err_type": "zz", "marked_sentences": "f0"}
            )
            yield SubmissionMustFail(
                Judge, {**data, "orig_cor": 0, "fin_cor": 0, "err_type": "pa", "marked_sentences": "x9"}
            )
            if len(log.attempts) == 1:
                expect("fin_cor", "not in", self.html)
        marked = [sentences[0], sentences[-1]] if orig_cor == 0 or fin_cor == 0 else []
        data.update(err_type="rga#pa" if marked else "", marked_sentences="#".join(marked))
        if self.round_number == 1:  # an otherwise valid verdict with over-long remarks
            yield SubmissionMustFail(Judge, {**data, "remarks": "r" * 5001})
        yield Judge, data
        expect(self.player.con_mat, "==", confusion_label(orig_cor, log.check_passed))
        expect(self.player.fin_cor, "==", fin_cor if len(log.attempts) > 1 else orig_cor)
        expect(self.player.err_type, "==", "pa#rga" if marked else "")
        index = sentence_index(log)
        expect(self.player.sentence, "==", "#".join(index[sentence_id] for sentence_id in marked))
