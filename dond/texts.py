"""Every participant-facing word of the dond app, in English, German (formal "Sie") and Italian (formal "Lei").

Placeholders in braces. ``{other}``, ``{Other}`` (at a sentence's start) and the language's case forms
(``{other_dat}`` in German; ``{other_of}``, ``{other_to}`` in Italian) name the opponent as the session's
``opponent_intro`` says (`OPPONENTS`, keyed by ``backend.dond.treatments.introduced_as``); `texts` fills them in, the other placeholders stay for the caller.
"""

import functools

TEXTS = {
    "en": {
        "instructions_title": "Instructions",
        "intro": "You will negotiate with {intro} about how to split the items below between the two of you.",
        "rules": [
            "You both see the same items. {values_rule}",
            "You write messages in turn, at most {max_messages} each. {first}",
            "Instead of writing, you can make a secret proposal at any time it is your turn: you state how many of "
            "each item YOU want to take. {Other} does not see it and is then asked to make a proposal too. When all "
            "messages are used, the one who wrote first makes a secret proposal first, then the other.",
            "If the two proposals fit together (together they never ask for more items of a kind than there are), "
            "each of you gets the points of the items you asked for. Items nobody asked for are left over. "
            "Otherwise both of you get 0 points.",
        ],
        "values_own": "The table shows your points per item. {Other} has separate points for each item, which may "
        "differ from yours; you do not see them.",
        "values_shown": "The table shows your points per item and also {other}'s points per item.",
        "values_other_sees": "{Other} also sees your points per item.",
        "values_other_blind": "{Other} does not see your points.",
        "describe_none": "{Other} has been instructed to act as a neutral representative.",
        "describe_average": "{Other} has been described as an average negotiator.",
        "describe_expert": "{Other} has been described as an expert negotiator.",
        "describe_awful": "{Other} has been described as a very poor negotiator.",
        "first_you": "You write the first message.",
        "first_other": "{Other} writes the first message.",
        "goal_semi": "Your goal: earn as many points as you can for yourself.",
        "goal_coop": "Your goal: make the sum of your points and {other}'s points as large as possible.",
        "goal_comp": "Your goal: make your points minus {other}'s points as large as possible.",
        "bonus_rule": "Your bonus follows this goal: {per_point} per point (never below zero).",
        "item": "Item",
        "count": "Available",
        "your_value": "Points per item for you",
        "other_value": "Points per item for {other}",
        "bargain_title": "Negotiation",
        "rules_open": "Rules of the game",
        "you": "You",
        "send": "Send",
        "placeholder": "Write a message…",
        "chat_label": "Conversation",
        "chars": "{n} / {max} characters",
        "error_too_long_typed": "Your message is {over} characters too long (at most {max}). Please shorten it "
        "before sending.",
        "messages_left": "Messages left for you: {n}",
        "your_turn": "Your turn: write a message or make your secret proposal.",
        "waiting": "Waiting for {other}…",
        "typing": "{Other} is writing…",
        "must_propose": "Please make your secret proposal now.",
        "proposal_title": "Your secret proposal: how many of each item do you take?",
        "preview": "This proposal is worth {points} points to you.",
        "propose": "Submit secret proposal",
        "confirm_summary": "You take: {items}. This is worth {points} points to you. Submit this secret proposal? "
        "It cannot be changed.",
        "confirm_yes": "Yes, submit",
        "confirm_no": "Change it",
        "error_count": "{item}: please enter a whole number from 0 to {count}.",
        "notice_other_proposed": "{Other} has made a secret proposal. Please make yours now.",
        "notice_time_up": "All messages have been used. Please make your secret proposal now; {other} makes theirs "
        "after you.",
        "notice_time_up_wait": "All messages have been used. {Other} makes a secret proposal first; then it is your "
        "turn to make yours.",
        "notice_no_reply": "{Other} sent an empty message.",
        "notice_you_proposed": "You made your secret proposal: {items}.",
        "notice_nothing": "nothing",
        "notice_retry": "The reply of {other} broke a rule of the game; a new answer has been requested.",
        "notice_unreachable": "{Other} could not be reached (a technical problem on our side, not caused "
        "by you). We are trying again; please wait.",
        "notice_aborted": "The game has ended early: {reason}",
        "finished": "The game is over.",
        "continue": "Continue",
        "timer_bargain": "Time left for the negotiation:",
        "timer_pairing": "Time left to find a partner:",
        "reason_partner_left": "{other} left the game.",
        "reason_partner_timeout": "{other} did not answer in time.",
        "reason_partner_left_self": "you left the game: your page sent nothing for too long.",
        "reason_partner_timeout_self": "you did not answer in time on your turn.",
        "reason_time_limit": "the time limit was reached.",
        "reason_llm_time_limit": "the time limit was reached while {other} was still to answer.",
        "reason_no_connection": "your page could not connect to the game, so nobody could make a move.",
        "reason_llm_invalid": "{other} broke the rules of the game too often.",
        "reason_llm_error": "{other} could not be reached because of a technical problem on our side, not "
        "because of anything you did. Please press Continue to go on with the study.",
        "reason_llm_budget": "{other} used up the allowed number of answers.",
        "reason_llm_cost_cap": "the study's budget for {other}'s answers is used up, so the game ends here, "
        "not because of anything you did. Please press Continue to go on with the study.",
        "reason_other": "the game could not continue.",
        "error_empty_message": "Please write a message first.",
        "error_too_long": "Your message is too long (at most {limit} characters).",
        "error_out_of_turn": "Please wait: it is the turn of {other}.",
        "error_proposal_required": "No more messages: please make your secret proposal.",
        "error_already_proposed": "You have already made your proposal.",
        "error_game_over": "The game is over.",
        "error_format": "Please enter a whole number from 0 to the number available for every item.",
        "error_over_ask": "You asked for more of an item than there is.",
        "error_unknown_item": "That item is not part of this game.",
        "error_bad_request": "Your browser sent something we could not read. Please try again.",
        "error_server": "Something went wrong on our side. Please try again in a moment.",
        "error_not_finished": "Please finish the negotiation first.",
        "results_title": "Results",
        "outcome_success": "Deal! Your proposals fit together.",
        "outcome_lose": "No deal: together the two proposals asked for more than there is of: {items}. So both "
        "get 0 points.",
        "over_asked": "{item} ({asked} asked for, {count} available)",
        "outcome_aborted": "The game ended early: {reason}",
        "proposals_title": "The two secret proposals",
        "you_asked": "You asked for",
        "other_asked": "{Other} asked for",
        "no_proposal": "no proposal",
        "worth": "Points this proposal would earn",
        "your_points": "Your points",
        "other_points": "Points of {other}",
        "main_score": "Efficiency score",
        "main_score_help": "100 means no split of the items could give one of you more points without the other "
        "getting fewer.",
        "bonus": "Your bonus",
        "paid_success": "Bonus rule applied: the deal is scored by your goal ({score} points), paid at {per_point} "
        "per point, never below zero.",
        "paid_lose": "Bonus rule applied: without a deal there is no bonus.",
        "paid_aborted": "Bonus rule applied: a game that ended early pays no bonus.",
        "chart_title": "All possible ways to split the items",
        "chart_all": "Possible split",
        "chart_frontier": "Best possible splits",
        "chart_agreed": "Your result",
        "chart_x": "Your points",
        "chart_y": "Points of {other}",
        "pairing_title": "Finding a partner",
        "pairing_body": "Please wait while we pair you with {intro}. Please keep this page open.",
        "pairing_none": "No partner could be found.",
        "unpaired_results": "No partner was available, so no game was played.",
        "pairing_rule": "If no partner is found within {minutes} minutes, you continue without a game and receive "
        "the participation fee ({fee}), without a bonus.",
        "notice_takeover": "{Other} has left the game. From now on an AI continues in their place; the game goes on "
        "and your bonus follows the same rule.",
        "notice_taken_over": "You were away too long. An AI now continues in your place; you can no longer write or "
        "propose in this game.",
        "error_taken_over": "An AI plays in your place since you were away too long; you can no longer move.",
        "paid_partner_left_half_total": "Bonus rule applied: {other} left, so the game ended. You receive half the "
        "total value of all items to you, rounded up ({points} points), on top of the participation fee.",
        "paid_partner_left_zero": "Bonus rule applied: {other} left, so the game ended. You receive the "
        "participation fee, without a bonus.",
        "rule_partner_end_half_total": "If {other} leaves or stops answering, the game ends and you receive half "
        "the total value of all items to you, rounded up ({points} points), on top of the participation fee.",
        "rule_partner_end_zero": "If {other} leaves or stops answering, the game ends and you receive the "
        "participation fee, without a bonus.",
        "rule_partner_model": "If {other} leaves or stops answering, an AI continues in their place and your bonus "
        "follows the same rule. Whoever leaves the game receives no bonus.",
        "paid_left_game": "Bonus rule applied: you left the game before it ended, so no bonus is paid.",
    },
    "de": {
        "instructions_title": "Anleitung",
        "intro": "Sie verhandeln mit {intro} darüber, wie die Gegenstände unten zwischen Ihnen aufgeteilt werden.",
        "rules": [
            "Sie sehen beide dieselben Gegenstände. {values_rule}",
            "Sie schreiben abwechselnd Nachrichten, höchstens {max_messages} pro Seite. {first}",
            "Statt zu schreiben, können Sie jederzeit, wenn Sie am Zug sind, einen geheimen Vorschlag machen: Sie "
            "geben an, wie viele von jedem Gegenstand SIE nehmen. {Other} sieht ihn nicht und wird dann ebenfalls "
            "um einen Vorschlag gebeten. Sind alle Nachrichten verbraucht, macht zuerst die Seite, die das Gespräch "
            "begonnen hat, ihren geheimen Vorschlag, danach die andere.",
            "Passen die beiden Vorschläge zusammen (zusammen verlangen sie von keiner Art mehr Gegenstände, als es "
            "gibt), erhält jede Seite die Punkte der verlangten Gegenstände. Nicht verlangte Gegenstände bleiben "
            "übrig. Andernfalls erhalten beide 0 Punkte.",
        ],
        "values_own": "Die Tabelle zeigt Ihre Punkte pro Stück. {Other} hat eigene Punkte für jeden Gegenstand, "
        "die sich von Ihren unterscheiden können; Sie sehen sie nicht.",
        "values_shown": "Die Tabelle zeigt Ihre Punkte pro Stück und auch die Punkte {other_dat} pro Stück.",
        "values_other_sees": "{Other} sieht auch Ihre Punkte pro Stück.",
        "values_other_blind": "{Other} sieht Ihre Punkte nicht.",
        "describe_none": "{Other} hat die Anweisung, als neutrale Vertretung zu handeln.",
        "describe_average": "{Other} wurde als durchschnittliche Verhandlungsperson beschrieben.",
        "describe_expert": "{Other} wurde als Verhandlungsprofi beschrieben.",
        "describe_awful": "{Other} wurde als sehr schwache Verhandlungsperson beschrieben.",
        "first_you": "Sie schreiben die erste Nachricht.",
        "first_other": "{Other} schreibt die erste Nachricht.",
        "goal_semi": "Ihr Ziel: möglichst viele Punkte für sich selbst.",
        "goal_coop": "Ihr Ziel: eine möglichst große Summe aus Ihren Punkten und den Punkten {other_dat}.",
        "goal_comp": "Ihr Ziel: Ihre Punkte minus die Punkte {other_dat} sollen möglichst groß sein.",
        "bonus_rule": "Ihr Bonus folgt diesem Ziel: {per_point} pro Punkt (nie unter null).",
        "item": "Gegenstand",
        "count": "Verfügbar",
        "your_value": "Punkte pro Stück für Sie",
        "other_value": "Punkte pro Stück für {other}",
        "bargain_title": "Verhandlung",
        "rules_open": "Spielregeln",
        "you": "Sie",
        "send": "Senden",
        "placeholder": "Nachricht schreiben…",
        "chat_label": "Gespräch",
        "chars": "{n} / {max} Zeichen",
        "error_too_long_typed": "Ihre Nachricht ist {over} Zeichen zu lang (höchstens {max}). Bitte kürzen Sie sie "
        "vor dem Senden.",
        "messages_left": "Ihre verbleibenden Nachrichten: {n}",
        "your_turn": "Sie sind am Zug: Schreiben Sie eine Nachricht oder machen Sie Ihren geheimen Vorschlag.",
        "waiting": "Warten auf {other}…",
        "typing": "{Other} schreibt…",
        "must_propose": "Bitte machen Sie jetzt Ihren geheimen Vorschlag.",
        "proposal_title": "Ihr geheimer Vorschlag: Wie viele von jedem Gegenstand nehmen Sie?",
        "preview": "Dieser Vorschlag ist für Sie {points} Punkte wert.",
        "propose": "Geheimen Vorschlag abgeben",
        "confirm_summary": "Sie nehmen: {items}. Das ist für Sie {points} Punkte wert. Diesen geheimen Vorschlag "
        "abgeben? Er kann nicht geändert werden.",
        "confirm_yes": "Ja, abgeben",
        "confirm_no": "Ändern",
        "error_count": "{item}: Bitte geben Sie eine ganze Zahl von 0 bis {count} ein.",
        "notice_other_proposed": "{Other} hat einen geheimen Vorschlag gemacht. Bitte machen Sie jetzt Ihren.",
        "notice_time_up": "Alle Nachrichten sind verbraucht. Bitte machen Sie jetzt Ihren geheimen Vorschlag; "
        "{other} macht ihren danach.",
        "notice_time_up_wait": "Alle Nachrichten sind verbraucht. {Other} macht zuerst einen geheimen Vorschlag; "
        "danach sind Sie mit Ihrem an der Reihe.",
        "notice_no_reply": "{Other} hat eine leere Nachricht geschickt.",
        "notice_you_proposed": "Sie haben Ihren geheimen Vorschlag gemacht: {items}.",
        "notice_nothing": "nichts",
        "notice_retry": "Die Antwort {other_dat} verstieß gegen eine Spielregel; eine neue Antwort wurde angefordert.",
        "notice_unreachable": "{Other} war nicht erreichbar (ein technisches Problem auf unserer Seite, "
        "nicht Ihr Fehler). Wir versuchen es erneut; bitte warten Sie.",
        "notice_aborted": "Das Spiel wurde vorzeitig beendet: {reason}",
        "finished": "Das Spiel ist vorbei.",
        "continue": "Weiter",
        "timer_bargain": "Verbleibende Zeit für die Verhandlung:",
        "timer_pairing": "Verbleibende Zeit für die Suche:",
        "reason_partner_left": "{Other} hat das Spiel verlassen.",
        "reason_partner_timeout": "{Other} hat nicht rechtzeitig geantwortet.",
        "reason_partner_left_self": "Sie haben das Spiel verlassen: Ihre Seite hat zu lange nichts gesendet.",
        "reason_partner_timeout_self": "Sie haben in Ihrem Zug nicht rechtzeitig geantwortet.",
        "reason_time_limit": "Die Zeit ist abgelaufen.",
        "reason_llm_time_limit": "Die Zeit ist abgelaufen, während {other} noch antworten musste.",
        "reason_no_connection": "Ihre Seite konnte sich nicht mit dem Spiel verbinden, daher konnte niemand ziehen.",
        "reason_llm_invalid": "{Other} hat zu oft gegen die Spielregeln verstoßen.",
        "reason_llm_error": "{Other} war wegen eines technischen Problems auf unserer Seite nicht "
        "erreichbar, nicht wegen etwas, das Sie getan haben. Bitte wählen Sie „Weiter“, um mit der Studie "
        "fortzufahren.",
        "reason_llm_budget": "{Other} hat die erlaubte Anzahl an Antworten aufgebraucht.",
        "reason_llm_cost_cap": "das Budget der Studie für die Antworten von {other} ist aufgebraucht, daher endet das "
        "Spiel hier, nicht wegen etwas, das Sie getan haben. Bitte wählen Sie „Weiter“, um mit der Studie "
        "fortzufahren.",
        "reason_other": "Das Spiel konnte nicht fortgesetzt werden.",
        "error_empty_message": "Bitte schreiben Sie zuerst eine Nachricht.",
        "error_too_long": "Ihre Nachricht ist zu lang (höchstens {limit} Zeichen).",
        "error_out_of_turn": "Bitte warten Sie: {Other} ist am Zug.",
        "error_proposal_required": "Keine Nachrichten mehr: Bitte machen Sie Ihren geheimen Vorschlag.",
        "error_already_proposed": "Sie haben Ihren Vorschlag bereits gemacht.",
        "error_game_over": "Das Spiel ist vorbei.",
        "error_format": "Bitte geben Sie für jeden Gegenstand eine ganze Zahl von 0 bis zur verfügbaren Anzahl ein.",
        "error_over_ask": "Sie haben mehr von einem Gegenstand verlangt, als es gibt.",
        "error_unknown_item": "Dieser Gegenstand gehört nicht zu diesem Spiel.",
        "error_bad_request": "Ihr Browser hat etwas Unlesbares gesendet. Bitte versuchen Sie es erneut.",
        "error_server": "Bei uns ist etwas schiefgegangen. Bitte versuchen Sie es gleich noch einmal.",
        "error_not_finished": "Bitte beenden Sie zuerst die Verhandlung.",
        "results_title": "Ergebnis",
        "outcome_success": "Einigung! Ihre Vorschläge passen zusammen.",
        "outcome_lose": "Keine Einigung: Zusammen verlangten die beiden Vorschläge mehr, als es gibt, von: "
        "{items}. Daher erhalten beide 0 Punkte.",
        "over_asked": "{item} ({asked} verlangt, {count} verfügbar)",
        "outcome_aborted": "Das Spiel wurde vorzeitig beendet: {reason}",
        "proposals_title": "Die beiden geheimen Vorschläge",
        "you_asked": "Ihr Vorschlag",
        "other_asked": "Vorschlag {other_dat}",
        "no_proposal": "kein Vorschlag",
        "worth": "Punkte, die dieser Vorschlag einbrächte",
        "your_points": "Ihre Punkte",
        "other_points": "Punkte {other_dat}",
        "main_score": "Effizienzwert",
        "main_score_help": "100 bedeutet: Keine Aufteilung hätte einer Seite mehr Punkte geben können, ohne dass "
        "die andere weniger erhält.",
        "bonus": "Ihr Bonus",
        "paid_success": "Angewandte Bonusregel: Die Einigung wird nach Ihrem Ziel bewertet ({score} Punkte), "
        "vergütet mit {per_point} pro Punkt, nie unter null.",
        "paid_lose": "Angewandte Bonusregel: Ohne Einigung gibt es keinen Bonus.",
        "paid_aborted": "Angewandte Bonusregel: Ein vorzeitig beendetes Spiel bringt keinen Bonus.",
        "chart_title": "Alle möglichen Aufteilungen der Gegenstände",
        "chart_all": "Mögliche Aufteilung",
        "chart_frontier": "Bestmögliche Aufteilungen",
        "chart_agreed": "Ihr Ergebnis",
        "chart_x": "Ihre Punkte",
        "chart_y": "Punkte {other_dat}",
        "pairing_title": "Suche nach einer zweiten Person",
        "pairing_body": "Bitte warten Sie, bis Sie {intro} zugeordnet sind. Lassen Sie diese Seite geöffnet.",
        "pairing_none": "Es konnte keine zweite Person gefunden werden.",
        "unpaired_results": "Es war keine zweite Person verfügbar, daher fand kein Spiel statt.",
        "pairing_rule": "Wird innerhalb von {minutes} Minuten keine zweite Person gefunden, machen Sie ohne Spiel "
        "weiter und erhalten die Teilnahmevergütung ({fee}), ohne Bonus.",
        "notice_takeover": "{Other} hat das Spiel verlassen. Ab jetzt spielt eine KI an ihrer Stelle weiter; das "
        "Spiel geht weiter, und Ihr Bonus folgt derselben Regel.",
        "notice_taken_over": "Sie waren zu lange abwesend. Eine KI spielt jetzt an Ihrer Stelle weiter; Sie können "
        "in diesem Spiel nicht mehr schreiben oder vorschlagen.",
        "error_taken_over": "Eine KI spielt an Ihrer Stelle, da Sie zu lange abwesend waren; Sie können nicht mehr "
        "ziehen.",
        "paid_partner_left_half_total": "Angewandte Bonusregel: {Other} hat das Spiel verlassen, daher wurde es "
        "beendet. Sie erhalten die Hälfte des Gesamtwerts aller Gegenstände für Sie, aufgerundet ({points} Punkte), "
        "zusätzlich zur Teilnahmevergütung.",
        "paid_partner_left_zero": "Angewandte Bonusregel: {Other} hat das Spiel verlassen, daher wurde es beendet. "
        "Sie erhalten die Teilnahmevergütung, ohne Bonus.",
        "rule_partner_end_half_total": "Verlässt {other} das Spiel oder antwortet nicht mehr, endet das Spiel, und "
        "Sie erhalten die Hälfte des Gesamtwerts aller Gegenstände für Sie, aufgerundet ({points} Punkte), "
        "zusätzlich zur Teilnahmevergütung.",
        "rule_partner_end_zero": "Verlässt {other} das Spiel oder antwortet nicht mehr, endet das Spiel, und Sie "
        "erhalten die Teilnahmevergütung, ohne Bonus.",
        "rule_partner_model": "Verlässt {other} das Spiel oder antwortet nicht mehr, spielt eine KI an ihrer Stelle "
        "weiter, und Ihr Bonus folgt derselben Regel. Wer das Spiel verlässt, erhält keinen Bonus.",
        "paid_left_game": "Angewandte Bonusregel: Sie haben das Spiel vor seinem Ende verlassen, daher wird kein "
        "Bonus gezahlt.",
    },
    "it": {
        "instructions_title": "Istruzioni",
        "intro": "Lei negozierà con {intro} su come dividere gli oggetti qui sotto.",
        "rules": [
            "Entrambe le parti vedono gli stessi oggetti. {values_rule}",
            "Vi scrivete messaggi a turno, al massimo {max_messages} per parte. {first}",
            "Invece di scrivere, quando è il Suo turno può fare in qualsiasi momento una proposta segreta: indica "
            "quanti oggetti di ogni tipo prende LEI. {Other} non la vede e le viene poi chiesto di fare a sua volta "
            "una proposta. Quando tutti i messaggi sono stati usati, la parte che ha scritto per prima fa per prima la "
            "sua proposta segreta, poi l'altra.",
            "Se le due proposte sono compatibili (insieme non chiedono mai più oggetti di un tipo di quanti ce ne "
            "siano), ogni parte ottiene i punti degli oggetti che ha chiesto. Gli oggetti che nessuno chiede restano "
            "inutilizzati. Altrimenti entrambe le parti ottengono 0 punti.",
        ],
        "values_own": "La tabella mostra i Suoi punti per pezzo. {Other} ha propri punti per ogni oggetto, che "
        "possono essere diversi dai Suoi; Lei non li vede.",
        "values_shown": "La tabella mostra i Suoi punti per pezzo e anche i punti {other_of} per pezzo.",
        "values_other_sees": "Anche {other} vede i Suoi punti per pezzo.",
        "values_other_blind": "{Other} non vede i Suoi punti.",
        "describe_none": "{Other} ha l'istruzione di agire come una rappresentanza neutrale.",
        "describe_average": "{Other} è stata descritta come una parte che negozia a livello medio.",
        "describe_expert": "{Other} è stata descritta come una parte esperta nel negoziare.",
        "describe_awful": "{Other} è stata descritta come una parte che negozia molto male.",
        "first_you": "Il primo messaggio lo scrive Lei.",
        "first_other": "Il primo messaggio lo scrive {other}.",
        "goal_semi": "Il Suo obiettivo: guadagnare per sé il maggior numero possibile di punti.",
        "goal_coop": "Il Suo obiettivo: rendere il più grande possibile la somma dei Suoi punti e dei punti "
        "{other_of}.",
        "goal_comp": "Il Suo obiettivo: rendere il più grande possibile i Suoi punti meno i punti {other_of}.",
        "bonus_rule": "Il Suo bonus segue questo obiettivo: {per_point} per punto (mai sotto zero).",
        "item": "Oggetto",
        "count": "Disponibili",
        "your_value": "Punti per pezzo per Lei",
        "other_value": "Punti per pezzo per {other}",
        "bargain_title": "Negoziazione",
        "rules_open": "Regole del gioco",
        "you": "Lei",
        "send": "Invia",
        "placeholder": "Scriva un messaggio…",
        "chat_label": "Conversazione",
        "chars": "{n} / {max} caratteri",
        "error_too_long_typed": "Il Suo messaggio supera di {over} caratteri il limite ({max}). Lo accorci prima "
        "di inviarlo.",
        "messages_left": "Messaggi rimasti per Lei: {n}",
        "your_turn": "Tocca a Lei: scriva un messaggio o faccia la Sua proposta segreta.",
        "waiting": "In attesa {other_of}…",
        "typing": "{Other} sta scrivendo…",
        "must_propose": "Faccia ora la Sua proposta segreta.",
        "proposal_title": "La Sua proposta segreta: quanti oggetti di ogni tipo prende?",
        "preview": "Questa proposta Le vale {points} punti.",
        "propose": "Invia proposta segreta",
        "confirm_summary": "Lei prende: {items}. Questo Le vale {points} punti. Inviare questa proposta segreta? "
        "Non potrà essere modificata.",
        "confirm_yes": "Sì, invia",
        "confirm_no": "Modifica",
        "error_count": "{item}: inserisca un numero intero da 0 a {count}.",
        "notice_other_proposed": "{Other} ha fatto una proposta segreta. Faccia ora la Sua.",
        "notice_time_up": "Tutti i messaggi sono stati usati. Faccia ora la Sua proposta segreta; poi sarà il turno "
        "{other_of}.",
        "notice_time_up_wait": "Tutti i messaggi sono stati usati. Prima {other} fa una proposta segreta; poi "
        "toccherà a Lei fare la Sua.",
        "notice_no_reply": "{Other} ha inviato un messaggio vuoto.",
        "notice_you_proposed": "Ha fatto la Sua proposta segreta: {items}.",
        "notice_nothing": "niente",
        "notice_retry": "La risposta {other_of} ha violato una regola del gioco; è stata richiesta una nuova risposta.",
        "notice_unreachable": "Non è stato possibile raggiungere {other} (un problema tecnico da parte "
        "nostra, non causato da Lei). Stiamo riprovando; attenda.",
        "notice_aborted": "Il gioco è terminato in anticipo: {reason}",
        "finished": "Il gioco è finito.",
        "continue": "Continua",
        "timer_bargain": "Tempo rimasto per la negoziazione:",
        "timer_pairing": "Tempo rimasto per la ricerca:",
        "reason_partner_left": "{other} ha lasciato il gioco.",
        "reason_partner_timeout": "{other} non ha risposto in tempo.",
        "reason_partner_left_self": "ha lasciato il gioco: la Sua pagina non ha inviato nulla troppo a lungo.",
        "reason_partner_timeout_self": "non ha risposto in tempo durante il Suo turno.",
        "reason_time_limit": "il tempo a disposizione è scaduto.",
        "reason_llm_time_limit": "il tempo a disposizione è scaduto mentre {other} doveva ancora rispondere.",
        "reason_no_connection": "la Sua pagina non è riuscita a collegarsi al gioco, quindi nessuno ha potuto muovere.",
        "reason_llm_invalid": "{other} ha violato le regole del gioco troppe volte.",
        "reason_llm_error": "non è stato possibile raggiungere {other} a causa di un problema tecnico da "
        "parte nostra, non per qualcosa che ha fatto Lei. Prema Continua per proseguire lo studio.",
        "reason_llm_budget": "{other} ha esaurito il numero di risposte consentite.",
        "reason_llm_cost_cap": "il budget dello studio per le risposte di {other} è esaurito, quindi il gioco finisce "
        "qui, non per qualcosa che ha fatto Lei. Prema Continua per proseguire lo studio.",
        "reason_other": "il gioco non ha potuto continuare.",
        "error_empty_message": "Scriva prima un messaggio.",
        "error_too_long": "Il Suo messaggio è troppo lungo (al massimo {limit} caratteri).",
        "error_out_of_turn": "Attenda: è il turno {other_of}.",
        "error_proposal_required": "Niente più messaggi: faccia la Sua proposta segreta.",
        "error_already_proposed": "Ha già fatto la Sua proposta.",
        "error_game_over": "Il gioco è finito.",
        "error_format": "Inserisca per ogni oggetto un numero intero da 0 alla quantità disponibile.",
        "error_over_ask": "Ha chiesto più oggetti di un tipo di quanti ce ne siano.",
        "error_unknown_item": "Questo oggetto non fa parte del gioco.",
        "error_bad_request": "Il Suo browser ha inviato qualcosa di illeggibile. Riprovi.",
        "error_server": "Qualcosa è andato storto da parte nostra. Riprovi tra un momento.",
        "error_not_finished": "Termini prima la negoziazione.",
        "results_title": "Risultati",
        "outcome_success": "Accordo! Le due proposte sono compatibili.",
        "outcome_lose": "Nessun accordo: insieme le due proposte chiedevano più di quanto ci sia di: {items}. "
        "Quindi entrambe le parti ottengono 0 punti.",
        "over_asked": "{item} ({asked} chiesti, {count} disponibili)",
        "outcome_aborted": "Il gioco è terminato in anticipo: {reason}",
        "proposals_title": "Le due proposte segrete",
        "you_asked": "La Sua proposta",
        "other_asked": "Proposta {other_of}",
        "no_proposal": "nessuna proposta",
        "worth": "Punti che questa proposta avrebbe dato",
        "your_points": "I Suoi punti",
        "other_points": "Punti {other_of}",
        "main_score": "Punteggio di efficienza",
        "main_score_help": "100 significa che nessuna divisione avrebbe potuto dare più punti a una parte senza "
        "darne meno all'altra.",
        "bonus": "Il Suo bonus",
        "paid_success": "Regola del bonus applicata: l'accordo è valutato secondo il Suo obiettivo ({score} punti), "
        "pagato {per_point} per punto, mai sotto zero.",
        "paid_lose": "Regola del bonus applicata: senza accordo non c'è bonus.",
        "paid_aborted": "Regola del bonus applicata: un gioco terminato in anticipo non dà bonus.",
        "chart_title": "Tutti i modi possibili di dividere gli oggetti",
        "chart_all": "Divisione possibile",
        "chart_frontier": "Divisioni migliori possibili",
        "chart_agreed": "Il Suo risultato",
        "chart_x": "I Suoi punti",
        "chart_y": "Punti {other_of}",
        "pairing_title": "Ricerca di un'altra persona",
        "pairing_body": "Attenda mentre La abbiniamo a {intro}. Tenga aperta questa pagina.",
        "pairing_none": "Non è stato possibile trovare un'altra persona.",
        "unpaired_results": "Non c'era nessun'altra persona disponibile, quindi non si è giocato.",
        "pairing_rule": "Se entro {minutes} minuti non viene trovata un'altra persona, Lei prosegue senza gioco e "
        "riceve il compenso di partecipazione ({fee}), senza bonus.",
        "notice_takeover": "{Other} ha lasciato il gioco. D'ora in poi un'IA continua al suo posto; il gioco prosegue "
        "e il Suo bonus segue la stessa regola.",
        "notice_taken_over": "Lei è stato assente troppo a lungo. Ora un'IA continua al Suo posto; in questo gioco "
        "non può più scrivere né fare proposte.",
        "error_taken_over": "Un'IA gioca al Suo posto perché Lei è stato assente troppo a lungo; non può più muovere.",
        "paid_partner_left_half_total": "Regola del bonus applicata: {other} ha lasciato il gioco, che è quindi "
        "terminato. Lei riceve la metà del valore totale di tutti gli oggetti per Lei, arrotondata per eccesso "
        "({points} punti), oltre al compenso di partecipazione.",
        "paid_partner_left_zero": "Regola del bonus applicata: {other} ha lasciato il gioco, che è quindi terminato. "
        "Lei riceve il compenso di partecipazione, senza bonus.",
        "rule_partner_end_half_total": "Se {other} lascia il gioco o smette di rispondere, il gioco termina e Lei "
        "riceve la metà del valore totale di tutti gli oggetti per Lei, arrotondata per eccesso ({points} punti), "
        "oltre al compenso di partecipazione.",
        "rule_partner_end_zero": "Se {other} lascia il gioco o smette di rispondere, il gioco termina e Lei riceve il "
        "compenso di partecipazione, senza bonus.",
        "rule_partner_model": "Se {other} lascia il gioco o smette di rispondere, un'IA continua al suo posto e il Suo "
        "bonus segue la stessa regola. Chi lascia il gioco non riceve alcun bonus.",
        "paid_left_game": "Regola del bonus applicata: Lei ha lasciato il gioco prima della fine, quindi non viene "
        "pagato alcun bonus.",
    },
}

# How the opponent is named, per language and per kind (``ai``, ``person``, ``neutral``; see `opponent_kind`).
# ``intro`` follows the Instructions' "negotiate with"; ``label`` names its chat bubbles. German and Italian use
# feminine nouns throughout, so one set of pronouns and articles fits every kind.
OPPONENTS = {
    "en": {
        "ai": dict(intro="an AI language model", label="AI model", other="the AI model"),
        "person": dict(intro="another participant", label="Other participant", other="the other participant"),
        "neutral": dict(intro="another negotiator", label="Other negotiator", other="the other negotiator"),
    },
    "de": {
        "ai": dict(intro="einem KI-Sprachmodell", label="KI", other="die KI", other_dat="der KI"),
        "person": dict(
            intro="einer anderen teilnehmenden Person",
            label="Andere Person",
            other="die andere Person",
            other_dat="der anderen Person",
        ),
        "neutral": dict(
            intro="einer Gegenseite", label="Gegenseite", other="die Gegenseite", other_dat="der Gegenseite"
        ),
    },
    "it": {
        "ai": dict(
            intro="un modello linguistico di intelligenza artificiale",
            label="IA",
            other="l'IA",
            other_of="dell'IA",
            other_to="all'IA",
        ),
        "person": dict(
            intro="un'altra persona partecipante",
            label="Altra persona",
            other="l'altra persona",
            other_of="dell'altra persona",
            other_to="all'altra persona",
        ),
        "neutral": dict(
            intro="una controparte",
            label="Controparte",
            other="la controparte",
            other_of="della controparte",
            other_to="alla controparte",
        ),
    },
}


def fill_opponent(text, names: dict):
    """``text`` (a string or a list of them) with the opponent's names in place of their placeholders."""
    if isinstance(text, list):
        return [fill_opponent(part, names) for part in text]
    for key, name in names.items():
        text = text.replace("{" + key + "}", name)
    return text


@functools.lru_cache(maxsize=16)
def texts(language: str | None, kind: str = "neutral") -> dict:
    """The texts of ``language`` (English when unknown), the opponent named as ``kind`` says (`OPPONENTS`; ``kind``
    is what ``backend.dond.treatments.introduced_as`` gives).

    >>> texts("de", "ai")["typing"], texts("it", "person")["waiting"]
    ('Die KI schreibt…', "In attesa dell'altra persona…")
    """
    language = language if language in TEXTS else "en"
    names = dict(OPPONENTS[language].get(kind, OPPONENTS[language]["neutral"]))
    names["Other"] = names["other"][0].upper() + names["other"][1:]
    names["other_label"] = names.pop("label")
    result = {key: fill_opponent(value, names) for key, value in TEXTS[language].items()}
    result["other"] = names["other_label"]  # the chat's name of the opponent
    result["opponent_intro"] = names["intro"]
    return result
