"""Every word social_eval's own pages say to a participant, in the session's ``language`` (en, de, it; German in
"Sie", Italian in the formal "Lei"). The researcher's material (rubric, episodes, examples) is shown as written and
marked ``data-material`` in the templates; messages about submitted input are in ``backend/social/forms.py``.
"""

from __future__ import annotations

import study_flow

PAGE_TEXTS = {
    "en": {
        # Instructions
        "qualification": (
            "This is a short qualification round: you will rate a few conversations whose ratings we compare with "
            "reference ratings."
        ),
        "regular_plan_one": "You will rate 1 conversation, plus an occasional check conversation.",
        "regular_plan_many": "You will rate up to {count} conversations, plus an occasional check conversation.",
        "reasoning_rule": (
            "Each explanation needs at least {minimum} characters. The definitions and examples below are also "
            "shown next to every rating on the form."
        ),
        "dimensions_heading": "The dimensions",
        "examples_for": "Annotation examples for",
        "worked_example": "A fully rated example conversation",
        "scenario": "Scenario",
        "background": "Background",
        "goal": "Social goal",
        "secret": "Secret",
        "no_secret": "(none)",
        "dimension": "Dimension",
        "reasoning_of": "reasoning",
        "rating": "Rating",
        "annotator_reasoning": "Annotator's reasoning",
        "assessment": "Assessment",
        "good_example": "Good example",
        "bad_example": "Bad example",
        "range": "{low} to {high}",
        # Comprehension
        "quiz_title": "A few questions about the guideline",
        "quiz_intro_one": (
            "Before you start, please answer these questions. They check that the rating scales are clear; you have "
            "1 attempt."
        ),
        "quiz_intro_many": (
            "Before you start, please answer these questions. They check that the rating scales are clear; you have "
            "{count} attempts."
        ),
        "guideline_summary": "The guideline: definitions and examples",
        "question_wrong": "This answer is not right yet.",
        # Rate
        "rate_title": "Conversation {number} of {total}",
        "conversation": "Conversation",
        "turn": "Turn",
        "action": "[action]",
        "non_verbal": "[non-verbal]",
        "left": "left the conversation.",
        "ratings_for": "Ratings for",
        "hint": (
            "For each character and each dimension, explain your judgement in one or two sentences (at least "
            "{minimum} characters), then choose a rating. Your answers are kept if you reload the page. This "
            "conversation is reserved for you for {reserved}."
        ),
        # The {reserved} of "hint": the reservation's whole minutes (backend.core.assignment.minutes_shown).
        "reserved_one": "1 minute",
        "reserved_many": "{count} minutes",
        "keys": (
            "Keyboard: Tab moves from the explanation to the scale; the arrow keys or a typed number (for example - "
            "then 3) choose a value; Enter on the scale, or Ctrl+Enter anywhere, goes to the next rating and, on the "
            "last one, submits."
        ),
        "guide_toggle": "Guideline and examples",
        "step": "Rating {current} of {total}",
        "back": "Back",
        "next_rating": "Next rating",
        "counter_empty": "at least {minimum} characters",
        "counter_short": "{count} characters — at least {minimum}",
        "counter_ok": "✓ {count} characters",
        "counter_long": "{count} characters — at most {maximum}",
        "need_reason": "Please explain your rating in at least {minimum} characters (you wrote {count}).",
        "need_shorter": "Please shorten this explanation to at most {maximum} characters (you wrote {count}).",
        "need_rating": "Please choose a rating on the scale.",
        "nothing_left_rate": "All conversations now have enough ratings. Please press Next to finish.",
        # NothingLeft
        "nothing_left_title": "Nothing left to rate",
        "nothing_left": (
            "Thank you for your interest. Every conversation in this study already has enough ratings, so there is "
            "nothing left for you to do."
        ),
        "return_with_code": "Please return to Prolific with this code:",
        "return_button": "Return to Prolific",
        "return_submission": 'Please return your submission on Prolific ("Stop without completing").',
    },
    "de": {
        "qualification": (
            "Dies ist eine kurze Qualifikationsrunde: Sie bewerten einige Gespräche, deren Bewertungen wir mit "
            "Referenzbewertungen vergleichen."
        ),
        "regular_plan_one": "Sie bewerten 1 Gespräch und gelegentlich ein Kontrollgespräch.",
        "regular_plan_many": "Sie bewerten bis zu {count} Gespräche und gelegentlich ein Kontrollgespräch.",
        "reasoning_rule": (
            "Jede Begründung braucht mindestens {minimum} Zeichen. Die Definitionen und Beispiele unten stehen auch "
            "neben jeder Bewertung im Formular."
        ),
        "dimensions_heading": "Die Dimensionen",
        "examples_for": "Bewertungsbeispiele für",
        "worked_example": "Ein vollständig bewertetes Beispielgespräch",
        "scenario": "Situation",
        "background": "Hintergrund",
        "goal": "Soziales Ziel",
        "secret": "Geheimnis",
        "no_secret": "(keines)",
        "dimension": "Dimension",
        "reasoning_of": "Begründung",
        "rating": "Bewertung",
        "annotator_reasoning": "Begründung der bewertenden Person",
        "assessment": "Einschätzung",
        "good_example": "Gutes Beispiel",
        "bad_example": "Schlechtes Beispiel",
        "range": "{low} bis {high}",
        "quiz_title": "Einige Fragen zur Anleitung",
        "quiz_intro_one": (
            "Bevor Sie beginnen, beantworten Sie bitte diese Fragen. Sie prüfen, ob die Bewertungsskalen klar sind; "
            "Sie haben 1 Versuch."
        ),
        "quiz_intro_many": (
            "Bevor Sie beginnen, beantworten Sie bitte diese Fragen. Sie prüfen, ob die Bewertungsskalen klar sind; "
            "Sie haben {count} Versuche."
        ),
        "guideline_summary": "Die Anleitung: Definitionen und Beispiele",
        "question_wrong": "Diese Antwort ist noch nicht richtig.",
        "rate_title": "Gespräch {number} von {total}",
        "conversation": "Gespräch",
        "turn": "Beitrag",
        "action": "[Handlung]",
        "non_verbal": "[nonverbal]",
        "left": "hat das Gespräch verlassen.",
        "ratings_for": "Bewertungen für",
        "hint": (
            "Begründen Sie für jede Figur und jede Dimension Ihr Urteil in ein oder zwei Sätzen (mindestens "
            "{minimum} Zeichen) und wählen Sie dann eine Bewertung. Ihre Eingaben bleiben erhalten, wenn Sie die "
            "Seite neu laden. Dieses Gespräch ist {reserved} lang für Sie reserviert."
        ),
        "reserved_one": "1 Minute",
        "reserved_many": "{count} Minuten",
        "keys": (
            "Tastatur: Die Tabulatortaste führt von der Begründung zur Skala; die Pfeiltasten oder eine getippte "
            "Zahl (zum Beispiel - und dann 3) wählen einen Wert; die Eingabetaste auf der Skala oder Strg+Eingabe "
            "überall führt zur nächsten Bewertung und sendet bei der letzten ab."
        ),
        "guide_toggle": "Anleitung und Beispiele",
        "step": "Bewertung {current} von {total}",
        "back": "Zurück",
        "next_rating": "Nächste Bewertung",
        "counter_empty": "mindestens {minimum} Zeichen",
        "counter_short": "{count} Zeichen — mindestens {minimum}",
        "counter_ok": "✓ {count} Zeichen",
        "counter_long": "{count} Zeichen — höchstens {maximum}",
        "need_reason": (
            "Bitte begründen Sie Ihre Bewertung mit mindestens {minimum} Zeichen (Sie haben {count} geschrieben)."
        ),
        "need_shorter": (
            "Bitte kürzen Sie diese Begründung auf höchstens {maximum} Zeichen (Sie haben {count} geschrieben)."
        ),
        "need_rating": "Bitte wählen Sie eine Bewertung auf der Skala.",
        "nothing_left_rate": (
            "Alle Gespräche haben jetzt genügend Bewertungen. Bitte wählen Sie Weiter, um abzuschließen."
        ),
        "nothing_left_title": "Nichts mehr zu bewerten",
        "nothing_left": (
            "Vielen Dank für Ihr Interesse. Jedes Gespräch dieser Studie hat bereits genügend Bewertungen, daher "
            "gibt es für Sie nichts mehr zu tun."
        ),
        "return_with_code": "Bitte kehren Sie mit diesem Code zu Prolific zurück:",
        "return_button": "Zurück zu Prolific",
        "return_submission": "Bitte geben Sie Ihre Teilnahme auf Prolific zurück (ohne sie abzuschließen).",
    },
    "it": {
        "qualification": (
            "Questo è un breve turno di qualificazione: valuterà alcune conversazioni le cui valutazioni "
            "confrontiamo con valutazioni di riferimento."
        ),
        "regular_plan_one": "Valuterà 1 conversazione, più un'occasionale conversazione di controllo.",
        "regular_plan_many": "Valuterà fino a {count} conversazioni, più un'occasionale conversazione di controllo.",
        "reasoning_rule": (
            "Ogni motivazione richiede almeno {minimum} caratteri. Le definizioni e gli esempi qui sotto sono "
            "mostrati anche accanto a ogni valutazione nel modulo."
        ),
        "dimensions_heading": "Le dimensioni",
        "examples_for": "Esempi di valutazione per",
        "worked_example": "Una conversazione di esempio valutata per intero",
        "scenario": "Situazione",
        "background": "Profilo",
        "goal": "Obiettivo sociale",
        "secret": "Segreto",
        "no_secret": "(nessuno)",
        "dimension": "Dimensione",
        "reasoning_of": "motivazione",
        "rating": "Valutazione",
        "annotator_reasoning": "Motivazione di chi valuta",
        "assessment": "Giudizio",
        "good_example": "Esempio buono",
        "bad_example": "Esempio cattivo",
        "range": "da {low} a {high}",
        "quiz_title": "Alcune domande sulle istruzioni",
        "quiz_intro_one": (
            "Prima di iniziare, risponda a queste domande. Servono a verificare che le scale di valutazione siano "
            "chiare; ha 1 tentativo."
        ),
        "quiz_intro_many": (
            "Prima di iniziare, risponda a queste domande. Servono a verificare che le scale di valutazione siano "
            "chiare; ha {count} tentativi."
        ),
        "guideline_summary": "Le istruzioni: definizioni ed esempi",
        "question_wrong": "Questa risposta non è ancora corretta.",
        "rate_title": "Conversazione {number} di {total}",
        "conversation": "Conversazione",
        "turn": "Battuta",
        "action": "[azione]",
        "non_verbal": "[non verbale]",
        "left": "ha lasciato la conversazione.",
        "ratings_for": "Valutazioni per",
        "hint": (
            "Per ogni personaggio e ogni dimensione, motivi il Suo giudizio in una o due frasi (almeno {minimum} "
            "caratteri), poi scelga una valutazione. Le Sue risposte restano se ricarica la pagina. Questa "
            "conversazione è riservata a Lei per {reserved}."
        ),
        "reserved_one": "1 minuto",
        "reserved_many": "{count} minuti",
        "keys": (
            "Tastiera: il tasto Tab porta dalla motivazione alla scala; i tasti freccia o un numero digitato (per "
            "esempio - e poi 3) scelgono un valore; Invio sulla scala, o Ctrl+Invio ovunque, porta alla valutazione "
            "successiva e, sull'ultima, invia."
        ),
        "guide_toggle": "Istruzioni ed esempi",
        "step": "Valutazione {current} di {total}",
        "back": "Indietro",
        "next_rating": "Valutazione successiva",
        "counter_empty": "almeno {minimum} caratteri",
        "counter_short": "{count} caratteri — almeno {minimum}",
        "counter_ok": "✓ {count} caratteri",
        "counter_long": "{count} caratteri — al massimo {maximum}",
        "need_reason": "La preghiamo di motivare la Sua valutazione con almeno {minimum} caratteri (ne ha scritti {count}).",
        "need_shorter": "La preghiamo di limitare questa motivazione a {maximum} caratteri (ne ha scritti {count}).",
        "need_rating": "La preghiamo di scegliere una valutazione sulla scala.",
        "nothing_left_rate": "Tutte le conversazioni hanno ora abbastanza valutazioni. Prema Avanti per terminare.",
        "nothing_left_title": "Nulla da valutare",
        "nothing_left": (
            "Grazie per il Suo interesse. Ogni conversazione di questo studio ha già abbastanza valutazioni, quindi "
            "non c'è più nulla da fare per Lei."
        ),
        "return_with_code": "Torni a Prolific con questo codice:",
        "return_button": "Torna a Prolific",
        "return_submission": "Restituisca la Sua partecipazione su Prolific (senza completarla).",
    },
}

# The ends of the shipped Sotopia rubric's scales in our words: key -> (min, max, {language: (low end, high end)}).
# A rubric of the researcher's own, or a dimension with another range, gets the generic words below.
ENDPOINTS = {
    "believability": (
        0,
        10,
        {
            "en": ("not believable at all", "completely natural"),
            "de": ("überhaupt nicht glaubwürdig", "völlig natürlich"),
            "it": ("per nulla credibile", "del tutto naturale"),
        },
    ),
    "relationship": (
        -5,
        5,
        {
            "en": ("much worse", "much better"),
            "de": ("viel schlechter", "viel besser"),
            "it": ("molto peggiorata", "molto migliorata"),
        },
    ),
    "knowledge": (
        0,
        10,
        {
            "en": ("nothing new", "critical new information"),
            "de": ("nichts Neues", "entscheidend Neues"),
            "it": ("nulla di nuovo", "novità cruciali"),
        },
    ),
    "secret": (
        -10,
        0,
        {
            "en": ("critical secret revealed", "nothing revealed"),
            "de": ("wichtiges Geheimnis verraten", "nichts verraten"),
            "it": ("segreto cruciale rivelato", "nulla rivelato"),
        },
    ),
    "social_rules": (
        -10,
        0,
        {
            "en": ("serious crime", "no rule broken"),
            "de": ("schweres Verbrechen", "keine Regel verletzt"),
            "it": ("reato grave", "nessuna regola violata"),
        },
    ),
    "financial_and_material_benefits": (
        -5,
        5,
        {
            "en": ("large loss", "large gain"),
            "de": ("großer Verlust", "großer Gewinn"),
            "it": ("grande perdita", "grande guadagno"),
        },
    ),
    "goal": (
        0,
        10,
        {
            "en": ("no progress", "goal fully achieved"),
            "de": ("kein Fortschritt", "Ziel ganz erreicht"),
            "it": ("nessun progresso", "obiettivo pienamente raggiunto"),
        },
    ),
}
GENERIC_ENDPOINTS = {
    "en": ("lowest", "highest"),
    "de": ("niedrigster Wert", "höchster Wert"),
    "it": ("minimo", "massimo"),
}


def language_of(session) -> str:
    """The session's ``language`` (``en`` when unset or not one we have texts for)."""
    language = (session.config.get("language") or "en") if session is not None else "en"
    return language if language in PAGE_TEXTS and language in study_flow.MESSAGES else "en"


def page_texts(language: str) -> dict[str, str]:
    return PAGE_TEXTS.get(language, PAGE_TEXTS["en"])


def signed(value: int) -> str:
    """A scale value as shown: a true minus sign (``−3``)."""
    return str(value).replace("-", "−")


def range_text(dimension, language: str) -> str:
    """``−5 to 5`` / ``−5 bis 5`` / ``da −5 a 5``."""
    return page_texts(language)["range"].format(low=signed(dimension.min), high=signed(dimension.max))


def endpoints(dimension, language: str) -> tuple[str, str]:
    """What the two ends of a dimension's scale mean, in ``language``."""
    known = ENDPOINTS.get(dimension.key)
    if known and (known[0], known[1]) == (dimension.min, dimension.max):
        return known[2].get(language, known[2]["en"])
    return GENERIC_ENDPOINTS.get(language, GENERIC_ENDPOINTS["en"])


def plural(texts: dict[str, str], key: str, count: int, **values) -> str:
    """``<key>_one`` for 1, else ``<key>_many``, formatted with ``count``."""
    return texts[f"{key}_one" if count == 1 else f"{key}_many"].format(count=count, **values)


def rate_hint(language: str, *, minimum: int, minutes: int) -> str:
    """The rating page's hint: the explanation's minimum length and how long the conversation is reserved, the minutes
    in the singular or plural of ``language``.

    >>> rate_hint("en", minimum=20, minutes=1).endswith("reserved for you for 1 minute.")
    True
    >>> rate_hint("de", minimum=20, minutes=30).endswith("30 Minuten lang für Sie reserviert.")
    True
    """
    texts = page_texts(language)
    return texts["hint"].format(minimum=minimum, reserved=plural(texts, "reserved", minutes))
