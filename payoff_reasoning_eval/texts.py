"""Every participant-facing word of the payoff_reasoning_eval pages, in English, German (formal "Sie") and Italian
(formal "Lei"). The researcher's material stays as written and is marked ``data-material`` on the pages: the logs
(the model's responses), the games' names and payoff labels, and the protocol's error types (name, definition,
example: backend/reasoning/protocol.py).

>>> set(TEXTS["de"]) == set(TEXTS["en"]) == set(TEXTS["it"])
True
>>> texts(None)["verdict_correct"]
'Correct: no error in reasoning about payoffs'
"""

from __future__ import annotations

TEXTS = {
    "en": {
        "instructions_title": "How to judge the reasoning",
        "intro_1": "A language model was asked to play a one-shot game against an anonymous person. Both pick a "
        "letter, R or B, at the same time, and the payoffs depend on both letters. The model explained its thinking "
        "and ended its answer with its letter in braces, such as {B}. An automatic checker then looked for "
        "mistakes; when it found some, the model was asked to think again, up to five times.",
        "intro_2": "You will read {n} such samples. For each one, you see the first answer and, if the model tried "
        "more than once, its last answer. Your job is to say whether what the model claims about the payoffs is "
        "right, and if not, to show where it goes wrong.",
        "games_heading": "The games",
        "games_intro": "The tables list R before B, which is the reverse of how these games are usually drawn. The "
        "first number in a cell is what the model gets, the second what the other person gets. The same table is "
        "shown next to every sample.",
        "errors_heading": "What counts as an error",
        "errors_intro": "A response is incorrect if it contains at least one mistake in reasoning about the payoffs. "
        "Mark it with one or more of these types:",
        "ignore_heading": "What to ignore",
        "ignore": [
            "Game-theory words used loosely or wrongly, such as “dominant strategy” or “Nash equilibrium”.",
            "Claims that are debatable as game theory but say nothing false about the payoffs, such as “the "
            "rational move is the one that gives us the most together”.",
            "Calling the game by the wrong name, for example treating a Stag Hunt as a Prisoner's Dilemma.",
            "The choice itself: any letter is acceptable. Only the statements about payoffs are judged.",
        ],
        "steps_heading": "What you do for each sample",
        "steps": [
            "Read the first response. Choose correct if it has no payoff error, otherwise incorrect.",
            "If the model answered more than once, do the same for its last response.",
            "If you found an error, mark every sentence that contains one (select it; select it again to undo) and "
            "tick the error type(s). If everything is correct, mark no sentence and tick no type.",
            "Add a remark if something is unclear (optional). Your marks and choices are kept if you reload the page.",
        ],
        "example": "Example:",
        "matrix_caption": "Each cell: (payoff of the model, payoff of the other player). Rows: the model's choice; "
        "columns: the other player's choice.",
        "matrix_corner": "Model \\ Other",
        "judge_title": "Is the reasoning about payoffs correct?",
        "game": "The game:",
        "first_response": "First response",
        "of_attempts": "(of {n} attempts)",
        "last_response": "Last response (attempt {n})",
        "click_hint": "Click a sentence to mark it as faulty; click it again to unmark it.",
        "click_hint_touch": "Tap a sentence to mark it as faulty; tap it again to unmark it.",
        "orig_label": "Is the reasoning of the first response correct?",
        "fin_label": "Is the reasoning of the last response correct?",
        "verdict_correct": "Correct: no error in reasoning about payoffs",
        "verdict_incorrect": "Incorrect: at least one payoff error",
        "types_legend": "Error types (needed when a response is incorrect)",
        "marked_heading": "Marked sentences",
        "marked_none": "None yet.",
        "remarks_label": "Remarks (optional)",
        "chars": "{n} / {max} characters",
        "chars_over": "{n} / {max} characters: please shorten by {over}.",
        "error_remarks_long": "Please shorten your remarks to at most {max} characters (they have {n}).",
        "error_orig_missing": "Please say whether the first response is correct.",
        "error_fin_missing": "Please say whether the last response is correct.",
        "error_types_missing": "You judged a response incorrect: please tick at least one error type.",
        "error_sentences_missing": "You judged a response incorrect: please mark at least one faulty sentence in "
        "the response.",
        "error_types_extra": "You judged the reasoning correct: please untick the error types, or choose “incorrect”.",
        "error_sentences_extra": "You judged the reasoning correct: please unmark the sentences, or choose "
        "“incorrect”.",
    },
    "de": {
        "instructions_title": "So beurteilen Sie die Begründung",
        "intro_1": "Ein Sprachmodell sollte ein einmaliges Spiel gegen eine anonyme Person spielen. Beide wählen "
        "gleichzeitig einen Buchstaben, R oder B, und die Auszahlungen hängen von beiden Buchstaben ab. Das Modell "
        "erklärte seine Überlegungen und beendete seine Antwort mit seinem Buchstaben in geschweiften Klammern, "
        "etwa {B}. Danach suchte ein automatisches Prüfprogramm nach Fehlern; fand es welche, wurde das Modell "
        "gebeten, erneut nachzudenken, bis zu fünfmal.",
        "intro_2": "Sie lesen {n} solche Beispiele. Zu jedem sehen Sie die erste Antwort und, falls das Modell es "
        "mehrmals versucht hat, seine letzte Antwort. Ihre Aufgabe: beurteilen, ob stimmt, was das Modell über die "
        "Auszahlungen behauptet, und wenn nicht, zeigen, wo es sich irrt.",
        "games_heading": "Die Spiele",
        "games_intro": "Die Tabellen führen R vor B auf, also umgekehrt, als diese Spiele meist dargestellt werden. "
        "Die erste Zahl in einer Zelle ist, was das Modell erhält, die zweite, was die andere Person erhält. "
        "Dieselbe Tabelle steht neben jedem Beispiel.",
        "errors_heading": "Was als Fehler zählt",
        "errors_intro": "Eine Antwort ist falsch, wenn sie mindestens einen Fehler im Denken über die Auszahlungen "
        "enthält. Kennzeichnen Sie ihn mit einem oder mehreren dieser Typen:",
        "ignore_heading": "Was Sie nicht beachten",
        "ignore": [
            "Spieltheoretische Begriffe, die ungenau oder falsch verwendet werden, etwa „dominante Strategie“ oder "
            "„Nash-Gleichgewicht“.",
            "Aussagen, die spieltheoretisch strittig sind, aber nichts Falsches über die Auszahlungen sagen, etwa "
            "„der vernünftige Zug ist der, der uns zusammen am meisten bringt“.",
            "Ein falscher Name für das Spiel, zum Beispiel eine Hirschjagd, die als Gefangenendilemma behandelt wird.",
            "Die Wahl selbst: Jeder Buchstabe ist zulässig. Beurteilt werden nur die Aussagen über Auszahlungen.",
        ],
        "steps_heading": "Was Sie bei jedem Beispiel tun",
        "steps": [
            "Lesen Sie die erste Antwort. Wählen Sie „richtig“, wenn sie keinen Auszahlungsfehler enthält, sonst "
            "„falsch“.",
            "Hat das Modell mehrmals geantwortet, tun Sie dasselbe für seine letzte Antwort.",
            "Haben Sie einen Fehler gefunden, markieren Sie jeden Satz, der einen enthält (wählen Sie ihn aus; "
            "erneutes Auswählen hebt die Markierung auf), und kreuzen Sie den oder die Fehlertypen an. Ist alles "
            "richtig, markieren Sie keinen Satz und kreuzen keinen Typ an.",
            "Fügen Sie eine Anmerkung hinzu, wenn etwas unklar ist (freiwillig). Ihre Markierungen und Angaben "
            "bleiben erhalten, wenn Sie die Seite neu laden.",
        ],
        "example": "Beispiel:",
        "matrix_caption": "Jede Zelle: (Auszahlung des Modells, Auszahlung der anderen Person). Zeilen: die Wahl "
        "des Modells; Spalten: die Wahl der anderen Person.",
        "matrix_corner": "Modell \\ andere Person",
        "judge_title": "Ist die Begründung zu den Auszahlungen richtig?",
        "game": "Das Spiel:",
        "first_response": "Erste Antwort",
        "of_attempts": "(von {n} Versuchen)",
        "last_response": "Letzte Antwort (Versuch {n})",
        "click_hint": "Klicken Sie einen Satz an, um ihn als fehlerhaft zu markieren; ein erneuter Klick hebt die "
        "Markierung auf.",
        "click_hint_touch": "Tippen Sie einen Satz an, um ihn als fehlerhaft zu markieren; erneutes Tippen hebt die "
        "Markierung auf.",
        "orig_label": "Ist die Begründung der ersten Antwort richtig?",
        "fin_label": "Ist die Begründung der letzten Antwort richtig?",
        "verdict_correct": "Richtig: kein Fehler im Denken über die Auszahlungen",
        "verdict_incorrect": "Falsch: mindestens ein Auszahlungsfehler",
        "types_legend": "Fehlertypen (nötig, wenn eine Antwort falsch ist)",
        "marked_heading": "Markierte Sätze",
        "marked_none": "Noch keine.",
        "remarks_label": "Anmerkungen (freiwillig)",
        "chars": "{n} / {max} Zeichen",
        "chars_over": "{n} / {max} Zeichen: bitte um {over} kürzen.",
        "error_remarks_long": "Bitte kürzen Sie Ihre Anmerkungen auf höchstens {max} Zeichen (derzeit {n}).",
        "error_orig_missing": "Bitte geben Sie an, ob die erste Antwort richtig ist.",
        "error_fin_missing": "Bitte geben Sie an, ob die letzte Antwort richtig ist.",
        "error_types_missing": "Sie haben eine Antwort als falsch beurteilt: Bitte kreuzen Sie mindestens einen "
        "Fehlertyp an.",
        "error_sentences_missing": "Sie haben eine Antwort als falsch beurteilt: Bitte markieren Sie mindestens "
        "einen fehlerhaften Satz in der Antwort.",
        "error_types_extra": "Sie haben die Begründung als richtig beurteilt: Bitte entfernen Sie die Kreuze bei "
        "den Fehlertypen oder wählen Sie „falsch“.",
        "error_sentences_extra": "Sie haben die Begründung als richtig beurteilt: Bitte heben Sie die Markierungen "
        "der Sätze auf oder wählen Sie „falsch“.",
    },
    "it": {
        "instructions_title": "Come valutare il ragionamento",
        "intro_1": "A un modello linguistico è stato chiesto di giocare una partita singola contro una persona "
        "anonima. Entrambi scelgono nello stesso momento una lettera, R o B, e le vincite dipendono da entrambe le "
        "lettere. Il modello ha spiegato il suo ragionamento e ha chiuso la risposta con la sua lettera tra "
        "parentesi graffe, ad esempio {B}. Poi un controllo automatico ha cercato errori; quando ne ha trovati, al "
        "modello è stato chiesto di ripensarci, fino a cinque volte.",
        "intro_2": "Leggerà {n} esempi di questo tipo. Per ciascuno vede la prima risposta e, se il modello ha "
        "tentato più volte, la sua ultima risposta. Il Suo compito è dire se ciò che il modello afferma sulle "
        "vincite è giusto e, se non lo è, mostrare dove sbaglia.",
        "games_heading": "I giochi",
        "games_intro": "Le tabelle elencano R prima di B, cioè al contrario di come questi giochi sono di solito "
        "rappresentati. Il primo numero di una cella è ciò che ottiene il modello, il secondo ciò che ottiene "
        "l'altra persona. La stessa tabella è mostrata accanto a ogni esempio.",
        "errors_heading": "Che cosa conta come errore",
        "errors_intro": "Una risposta è sbagliata se contiene almeno un errore nel ragionamento sulle vincite. Lo "
        "indichi con uno o più di questi tipi:",
        "ignore_heading": "Che cosa ignorare",
        "ignore": [
            "Termini di teoria dei giochi usati in modo impreciso o errato, come «strategia dominante» o "
            "«equilibrio di Nash».",
            "Affermazioni discutibili dal punto di vista della teoria dei giochi che però non dicono nulla di falso "
            "sulle vincite, come «la mossa razionale è quella che ci dà di più insieme».",
            "Un nome sbagliato per il gioco, ad esempio trattare una caccia al cervo come un dilemma del prigioniero.",
            "La scelta stessa: qualsiasi lettera va bene. Si valutano solo le affermazioni sulle vincite.",
        ],
        "steps_heading": "Che cosa fa per ogni esempio",
        "steps": [
            "Legga la prima risposta. Scelga «corretta» se non contiene errori sulle vincite, altrimenti «sbagliata».",
            "Se il modello ha risposto più volte, faccia lo stesso per la sua ultima risposta.",
            "Se ha trovato un errore, segni ogni frase che ne contiene uno (la selezioni; selezionandola di nuovo "
            "il segno si toglie) e selezioni il tipo o i tipi di errore. Se tutto è corretto, non segni alcuna "
            "frase e non selezioni alcun tipo.",
            "Aggiunga un'osservazione se qualcosa non è chiaro (facoltativo). I Suoi segni e le Sue scelte restano "
            "anche se ricarica la pagina.",
        ],
        "example": "Esempio:",
        "matrix_caption": "Ogni cella: (vincita del modello, vincita dell'altra persona). Righe: la scelta del "
        "modello; colonne: la scelta dell'altra persona.",
        "matrix_corner": "Modello \\ altra persona",
        "judge_title": "Il ragionamento sulle vincite è corretto?",
        "game": "Il gioco:",
        "first_response": "Prima risposta",
        "of_attempts": "(su {n} tentativi)",
        "last_response": "Ultima risposta (tentativo {n})",
        "click_hint": "Faccia clic su una frase per segnarla come errata; un nuovo clic toglie il segno.",
        "click_hint_touch": "Tocchi una frase per segnarla come errata; un nuovo tocco toglie il segno.",
        "orig_label": "Il ragionamento della prima risposta è corretto?",
        "fin_label": "Il ragionamento dell'ultima risposta è corretto?",
        "verdict_correct": "Corretto: nessun errore nel ragionamento sulle vincite",
        "verdict_incorrect": "Sbagliato: almeno un errore sulle vincite",
        "types_legend": "Tipi di errore (necessari quando una risposta è sbagliata)",
        "marked_heading": "Frasi segnate",
        "marked_none": "Ancora nessuna.",
        "remarks_label": "Osservazioni (facoltative)",
        "chars": "{n} / {max} caratteri",
        "chars_over": "{n} / {max} caratteri: la preghiamo di accorciare di {over}.",
        "error_remarks_long": "La preghiamo di accorciare le Sue osservazioni a non più di {max} caratteri "
        "(ora sono {n}).",
        "error_orig_missing": "La preghiamo di indicare se la prima risposta è corretta.",
        "error_fin_missing": "La preghiamo di indicare se l'ultima risposta è corretta.",
        "error_types_missing": "Ha giudicato sbagliata una risposta: la preghiamo di selezionare almeno un tipo di "
        "errore.",
        "error_sentences_missing": "Ha giudicato sbagliata una risposta: la preghiamo di segnare almeno una frase "
        "errata nella risposta.",
        "error_types_extra": "Ha giudicato corretto il ragionamento: la preghiamo di togliere i tipi di errore "
        "selezionati, oppure scelga «sbagliato».",
        "error_sentences_extra": "Ha giudicato corretto il ragionamento: la preghiamo di togliere i segni dalle "
        "frasi, oppure scelga «sbagliato».",
    },
}


def texts(language: str | None) -> dict:
    """The pages' texts in ``language`` (``en``, ``de`` or ``it``); any other language reads English."""
    return TEXTS.get(language or "en", TEXTS["en"])
