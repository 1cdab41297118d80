"""Every participant-facing word of the bias_tests pages, in English, German (formal "Sie") and Italian (formal
"Lei"). The items themselves (situations, questions, options, arguments) are the researcher's material and stay as
written in the item file; the pages mark them ``data-material``.

>>> set(TEXTS["de"]) == set(TEXTS["en"]) == set(TEXTS["it"])
True
>>> texts("fr")["decision_title"]
'Your decision'
"""

from __future__ import annotations

TEXTS = {
    "en": {
        "instructions_title": "Instructions",
        "intro": "You will read {n} short situations from everyday working life and answer a question about each. "
        "There are no right or wrong answers (except for one question that checks that you read carefully): answer "
        "as you would decide yourself.",
        "repeat": "Some situations come back later in a slightly different form. Please answer each one on its own, "
        "without looking for the differences.",
        "confidence_intro": "After each answer, use the slider to say how sure you are of it, from 0 (a pure guess) "
        "to 100 (completely sure). Any click or key press on the slider counts as your answer, also at its starting "
        "point of 50.",
        "confidence_intro_touch": "After each answer, use the slider to say how sure you are of it, from 0 (a pure "
        "guess) to 100 (completely sure). Any tap on the slider counts as your answer, also at its starting point of "
        "50.",
        "decision_title": "Your decision",
        "confidence_label": "How sure are you of your answer? Move the slider or click on it.",
        "confidence_unset": "not set yet",
        "confidence_hint": "A click on the slider counts, also at its starting point of 50.",
        "confidence_label_touch": "How sure are you of your answer? Move the slider or tap on it.",
        "confidence_hint_touch": "A tap on the slider counts, also at its starting point of 50.",
        "scale_low": "0 = pure guess",
        "scale_high": "100 = completely sure",
        "error_choice": "Please choose one of the answers above.",
        "error_confidence": "Please use the slider to say how sure you are (0 to 100).",
        "arguments_hint": "Tick every argument you would use. You can tick as many as you like, at least one.",
        "arguments_count": "Ticked: {n}",
        "error_arguments": "Please tick at least one of the arguments listed.",
    },
    "de": {
        "instructions_title": "Anleitung",
        "intro": "Sie lesen {n} kurze Situationen aus dem Berufsalltag und beantworten zu jeder eine Frage. Es gibt "
        "keine richtigen oder falschen Antworten (außer bei einer Frage, die prüft, ob Sie aufmerksam lesen): "
        "Antworten Sie so, wie Sie selbst entscheiden würden.",
        "repeat": "Manche Situationen kommen später in leicht veränderter Form wieder. Bitte beantworten Sie jede "
        "für sich, ohne nach den Unterschieden zu suchen.",
        "confidence_intro": "Geben Sie nach jeder Antwort mit dem Schieberegler an, wie sicher Sie sich sind, von 0 "
        "(reines Raten) bis 100 (völlig sicher). Jeder Klick und jeder Tastendruck auf dem Schieberegler zählt als "
        "Ihre Angabe, auch am Ausgangspunkt 50.",
        "confidence_intro_touch": "Geben Sie nach jeder Antwort mit dem Schieberegler an, wie sicher Sie sich sind, "
        "von 0 (reines Raten) bis 100 (völlig sicher). Jedes Tippen auf den Schieberegler zählt als Ihre Angabe, "
        "auch am Ausgangspunkt 50.",
        "decision_title": "Ihre Entscheidung",
        "confidence_label": "Wie sicher sind Sie sich Ihrer Antwort? Bewegen Sie den Schieberegler oder klicken Sie "
        "darauf.",
        "confidence_unset": "noch nicht angegeben",
        "confidence_hint": "Ein Klick auf den Schieberegler zählt, auch am Ausgangspunkt 50.",
        "confidence_label_touch": "Wie sicher sind Sie sich Ihrer Antwort? Bewegen Sie den Schieberegler oder tippen "
        "Sie darauf.",
        "confidence_hint_touch": "Ein Tippen auf den Schieberegler zählt, auch am Ausgangspunkt 50.",
        "scale_low": "0 = reines Raten",
        "scale_high": "100 = völlig sicher",
        "error_choice": "Bitte wählen Sie eine der Antworten oben.",
        "error_confidence": "Bitte geben Sie mit dem Schieberegler an, wie sicher Sie sich sind (0 bis 100).",
        "arguments_hint": "Kreuzen Sie jedes Argument an, das Sie verwenden würden: so viele Sie möchten, "
        "mindestens eines.",
        "arguments_count": "Angekreuzt: {n}",
        "error_arguments": "Bitte kreuzen Sie mindestens eines der aufgeführten Argumente an.",
    },
    "it": {
        "instructions_title": "Istruzioni",
        "intro": "Leggerà {n} brevi situazioni tratte dalla vita lavorativa quotidiana e risponderà a una domanda su "
        "ciascuna. Non ci sono risposte giuste o sbagliate (tranne una domanda che verifica se legge con "
        "attenzione): risponda come deciderebbe Lei stesso.",
        "repeat": "Alcune situazioni tornano più avanti in una forma leggermente diversa. La preghiamo di "
        "rispondere a ciascuna per sé, senza cercare le differenze.",
        "confidence_intro": "Dopo ogni risposta, indichi con il cursore quanto ne è sicuro, da 0 (pura ipotesi) a "
        "100 (del tutto sicuro). Ogni clic o tasto premuto sul cursore vale come Sua indicazione, anche nel punto "
        "di partenza 50.",
        "confidence_intro_touch": "Dopo ogni risposta, indichi con il cursore quanto ne è sicuro, da 0 (pura "
        "ipotesi) a 100 (del tutto sicuro). Ogni tocco sul cursore vale come Sua indicazione, anche nel punto di "
        "partenza 50.",
        "decision_title": "La Sua decisione",
        "confidence_label": "Quanto è sicuro della Sua risposta? Sposti il cursore o faccia clic su di esso.",
        "confidence_unset": "non ancora indicato",
        "confidence_hint": "Anche un clic sul cursore nel punto di partenza 50 vale come indicazione.",
        "confidence_label_touch": "Quanto è sicuro della Sua risposta? Sposti il cursore o lo tocchi.",
        "confidence_hint_touch": "Anche un tocco sul cursore nel punto di partenza 50 vale come indicazione.",
        "scale_low": "0 = pura ipotesi",
        "scale_high": "100 = del tutto sicuro",
        "error_choice": "La preghiamo di scegliere una delle risposte sopra.",
        "error_confidence": "La preghiamo di indicare con il cursore quanto è sicuro (da 0 a 100).",
        "arguments_hint": "Selezioni ogni argomento che userebbe: quanti ne desidera, almeno uno.",
        "arguments_count": "Selezionati: {n}",
        "error_arguments": "La preghiamo di selezionare almeno uno degli argomenti elencati.",
    },
}


def texts(language: str | None) -> dict[str, str]:
    """The pages' texts in ``language`` (``en``, ``de`` or ``it``); any other language reads English."""
    return TEXTS.get(language or "en", TEXTS["en"])
