"""The participant-facing texts of the shared pages (consent, screen-out, completion, progress, entry refusals), in
English, German and Italian: one dictionary per language, the same keys in each.

>>> sorted(MESSAGES) == sorted(SHARED_LANGUAGES) and set(MESSAGES["de"]) == set(MESSAGES["en"])
True
"""

from __future__ import annotations

MESSAGES = {
    "en": {
        # oTree's own words on every page, in the session's language (lab_server/languages.py puts them there).
        "study_title": "Research study",
        "next": "Next",
        "timer_text": "Time left to complete this page:",
        "form_errors": "Please fix the errors.",
        "field_required": "This field is required.",
        "field_number": "Please enter a number.",
        "field_at_least": "Please enter at least {minimum}.",
        "field_at_most": "Please enter at most {maximum}.",
        "field_between": "Please enter a number from {minimum} to {maximum}.",
        "yes": "Yes",
        "no": "No",
        "powered_by": "Powered by {product_name}",
        "wait_title": "Please wait",
        "wait_one": "Waiting for the other participant.",
        "wait_many": "Waiting for the other participants.",
        "wait_group": "Waiting to form a group with other participants.",
        "loading": "Loading the study…",
        "needs_javascript": "This study needs JavaScript. Please enable it and reload the page.",
        "consent_title": "Consent",
        "welcome_title": "Welcome",
        "consent_label": "Do you agree to take part in this study?",
        "consent_yes": "I have read the information above and agree to take part.",
        "consent_no": "I do not agree to take part.",
        "default_consent": (
            "This study is run by researchers who compare how people and language models solve the same tasks. "
            "Taking part is voluntary and you may stop at any time by closing this window. We store your answers "
            "and your Prolific ID, without your name, and publish only anonymised, aggregated results."
        ),
        "consent_facts": "The study takes about {minutes} minutes. You receive {pay} for taking part.",
        "consent_contact": "Questions about the study: {contact}.",
        "workload_minutes": "Expected time: about {minutes} minutes in all.",
        "workload_dond": "You negotiate once with another party; each side may send up to {messages} messages.",
        "workload_social_eval": (
            "You rate {units} conversations, with {ratings} ratings for each; every rating needs an explanation of "
            "at least {min_chars} characters."
        ),
        "workload_payoff_reasoning_eval": "You judge {units} reasoning texts, sentence by sentence.",
        "workload_bias_tests": "You answer {units} questions.",
        "completion_title": "Thank you!",
        "completion_body": "You have completed the study.",
        "completion_code": "Your completion code",
        "completion_redirect": "You will be sent back to Prolific in {seconds} seconds.",
        "completion_button": "Return to Prolific now",
        "screenout_title": "Thank you for your interest",
        "screenout_body": "You cannot continue with this study.",
        "screenout_code": "Please return to Prolific and enter this code",
        "progress": "Item {current} of {total}",
        "entry_title": "This link cannot start the study",
        "entry_missing_id": (
            "The link you opened does not include your Prolific ID, so we cannot give you a place in this study."
        ),
        "entry_malformed_id": (
            "The link you opened holds a Prolific ID that is not valid, so we cannot give you a place in this study."
        ),
        "entry_retry": (
            "Please go back to Prolific and open the study from there, without changing the link. If this happens "
            "again, write to the researcher through Prolific."
        ),
        "entry_researcher": (
            "Researchers trying their own study: open the test link on the session's Study links page in the "
            "admin, which makes up a Prolific ID for you."
        ),
        "full_title": "All places are taken",
        "full_body": "Sorry: every place in this study has already been taken, so you cannot take part this time.",
        "full_return": (
            'Please return the study on Prolific (choose "Return submission") so that this does not count against '
            "you. Do not enter a completion code."
        ),
        "full_contact": "If you believe this is a mistake, send the researcher a message through Prolific.",
        "entry_wrong_study": (
            "The link you opened belongs to another study, so we cannot give you a place in this one."
        ),
        "admission_title": "Many people are starting this study right now",
        "admission_body": (
            "Please keep this page open. It checks again by itself, more often as your turn comes closer, and takes "
            "you to the study as soon as there is room. People are let in in the order they arrived."
        ),
        "admission_kept": "You do not lose anything by waiting: your link and your Prolific ID are kept.",
        "admission_now": "Try again now",
        "admission_expected": "Your turn is expected in about {minutes} minutes.",
        "admission_expected_soon": "Your turn is expected within a minute.",
        "busy_title": "Too many new participants from your connection",
        "busy_body": (
            "Many people have just started this study from the same internet connection as you, so we cannot give "
            "you a place right now. Please try again in a few minutes."
        ),
        "requests_title": "Too many requests",
        "requests_body": (
            "Your browser asked for this page very many times in a short while. Please wait a little: this page "
            "opens the study again by itself, where you were."
        ),
        "requests_again": "Open the page again",
        "live_too_fast": "You are sending messages too quickly. Please wait {seconds} seconds and try again.",
    },
    "de": {
        "study_title": "Forschungsstudie",
        "next": "Weiter",
        "timer_text": "Verbleibende Zeit für diese Seite:",
        "form_errors": "Bitte korrigieren Sie die markierten Angaben.",
        "field_required": "Bitte füllen Sie dieses Feld aus.",
        "field_number": "Bitte geben Sie eine Zahl ein.",
        "field_at_least": "Bitte geben Sie mindestens {minimum} ein.",
        "field_at_most": "Bitte geben Sie höchstens {maximum} ein.",
        "field_between": "Bitte geben Sie eine Zahl von {minimum} bis {maximum} ein.",
        "yes": "Ja",
        "no": "Nein",
        "powered_by": "Umgesetzt mit {product_name}",
        "wait_title": "Bitte warten Sie",
        "wait_one": "Wir warten auf die andere teilnehmende Person.",
        "wait_many": "Wir warten auf die anderen Teilnehmenden.",
        "wait_group": "Wir warten, bis sich eine Gruppe mit anderen Teilnehmenden bildet.",
        "loading": "Die Studie wird geladen …",
        "needs_javascript": "Diese Studie benötigt JavaScript. Bitte aktivieren Sie es und laden Sie die Seite neu.",
        "consent_title": "Einwilligung",
        "welcome_title": "Willkommen",
        "consent_label": "Sind Sie einverstanden, an dieser Studie teilzunehmen?",
        "consent_yes": "Ich habe die Informationen gelesen und möchte teilnehmen.",
        "consent_no": "Ich möchte nicht teilnehmen.",
        "default_consent": (
            "Diese Studie wird von Forschenden durchgeführt, die vergleichen, wie Menschen und Sprachmodelle "
            "dieselben Aufgaben lösen. Die Teilnahme ist freiwillig; Sie können jederzeit abbrechen, indem Sie das "
            "Fenster schließen. Wir speichern Ihre Antworten und Ihre Prolific-ID, nicht Ihren Namen, und "
            "veröffentlichen nur anonymisierte, zusammengefasste Ergebnisse."
        ),
        "consent_facts": "Die Studie dauert etwa {minutes} Minuten. Für Ihre Teilnahme erhalten Sie {pay}.",
        "consent_contact": "Fragen zur Studie: {contact}.",
        "workload_minutes": "Erwartete Dauer: insgesamt etwa {minutes} Minuten.",
        "workload_dond": "Sie verhandeln einmal mit einer anderen Seite; jede Seite darf bis zu {messages} Nachrichten senden.",
        "workload_social_eval": (
            "Sie bewerten {units} Gespräche, mit je {ratings} Bewertungen; jede Bewertung braucht eine Begründung von "
            "mindestens {min_chars} Zeichen."
        ),
        "workload_payoff_reasoning_eval": "Sie beurteilen {units} Begründungstexte, Satz für Satz.",
        "workload_bias_tests": "Sie beantworten {units} Fragen.",
        "completion_title": "Vielen Dank!",
        "completion_body": "Sie haben die Studie abgeschlossen.",
        "completion_code": "Ihr Abschlusscode",
        "completion_redirect": "Sie werden in {seconds} Sekunden zu Prolific zurückgeleitet.",
        "completion_button": "Jetzt zu Prolific zurückkehren",
        "screenout_title": "Vielen Dank für Ihr Interesse",
        "screenout_body": "Sie können an dieser Studie nicht weiter teilnehmen.",
        "screenout_code": "Bitte kehren Sie zu Prolific zurück und geben Sie diesen Code ein",
        "progress": "Aufgabe {current} von {total}",
        "entry_title": "Mit diesem Link kann die Studie nicht beginnen",
        "entry_missing_id": (
            "Der geöffnete Link enthält Ihre Prolific-ID nicht, daher können wir Ihnen keinen Platz in dieser Studie "
            "geben."
        ),
        "entry_malformed_id": (
            "Der geöffnete Link enthält eine ungültige Prolific-ID, daher können wir Ihnen keinen Platz in dieser "
            "Studie geben."
        ),
        "entry_retry": (
            "Bitte kehren Sie zu Prolific zurück und öffnen Sie die Studie von dort aus, ohne den Link zu verändern. "
            "Falls das erneut passiert, schreiben Sie den Forschenden bitte über Prolific."
        ),
        "entry_researcher": (
            "Für Forschende, die ihre eigene Studie ausprobieren: Öffnen Sie den Testlink auf der Link-Seite der "
            "Sitzung im Admin-Bereich; er erzeugt eine Prolific-ID für Sie."
        ),
        "full_title": "Alle Plätze sind vergeben",
        "full_body": (
            "Leider sind alle Plätze in dieser Studie bereits vergeben, daher können Sie diesmal nicht teilnehmen."
        ),
        "full_return": (
            "Bitte geben Sie die Studie auf Prolific zurück („Return submission“), damit Ihnen daraus kein Nachteil "
            "entsteht. Geben Sie keinen Abschlusscode ein."
        ),
        "full_contact": (
            "Wenn Sie glauben, dass es sich um einen Fehler handelt, schreiben Sie den Forschenden bitte über Prolific."
        ),
        "entry_wrong_study": (
            "Der geöffnete Link gehört zu einer anderen Studie, daher können wir Ihnen in dieser Studie keinen Platz "
            "geben."
        ),
        "admission_title": "Gerade beginnen sehr viele Personen diese Studie",
        "admission_body": (
            "Bitte lassen Sie diese Seite geöffnet. Sie prüft von selbst erneut, umso öfter, je näher Sie an der "
            "Reihe sind, und bringt Sie zur Studie, sobald Platz ist. Eingelassen wird in der Reihenfolge der "
            "Ankunft."
        ),
        "admission_kept": "Durch das Warten verlieren Sie nichts: Ihr Link und Ihre Prolific-ID bleiben erhalten.",
        "admission_now": "Jetzt erneut versuchen",
        "admission_expected": "Sie sind voraussichtlich in etwa {minutes} Minuten an der Reihe.",
        "admission_expected_soon": "Sie sind voraussichtlich innerhalb einer Minute an der Reihe.",
        "busy_title": "Zu viele neue Teilnehmende über Ihre Verbindung",
        "busy_body": (
            "Gerade haben viele Personen über dieselbe Internetverbindung wie Sie mit dieser Studie begonnen, daher "
            "können wir Ihnen im Moment keinen Platz geben. Bitte versuchen Sie es in einigen Minuten erneut."
        ),
        "requests_title": "Zu viele Anfragen",
        "requests_body": (
            "Ihr Browser hat diese Seite in kurzer Zeit sehr oft angefordert. Bitte warten Sie etwas: Diese Seite "
            "öffnet die Studie von selbst wieder, dort, wo Sie waren."
        ),
        "requests_again": "Seite erneut öffnen",
        "live_too_fast": "Sie senden zu schnell. Bitte warten Sie {seconds} Sekunden und versuchen Sie es erneut.",
    },
    "it": {
        "study_title": "Studio di ricerca",
        "next": "Avanti",
        "timer_text": "Tempo rimasto per completare questa pagina:",
        "form_errors": "La preghiamo di correggere le risposte segnalate.",
        "field_required": "Questo campo è obbligatorio.",
        "field_number": "La preghiamo di inserire un numero.",
        "field_at_least": "La preghiamo di inserire almeno {minimum}.",
        "field_at_most": "La preghiamo di inserire al massimo {maximum}.",
        "field_between": "La preghiamo di inserire un numero da {minimum} a {maximum}.",
        "yes": "Sì",
        "no": "No",
        "powered_by": "Realizzato con {product_name}",
        "wait_title": "Attenda, per favore",
        "wait_one": "In attesa dell'altro partecipante.",
        "wait_many": "In attesa degli altri partecipanti.",
        "wait_group": "In attesa di formare un gruppo con altri partecipanti.",
        "loading": "Caricamento dello studio…",
        "needs_javascript": "Questo studio richiede JavaScript. La preghiamo di attivarlo e di ricaricare la pagina.",
        "consent_title": "Consenso",
        "welcome_title": "Benvenuto",
        "consent_label": "Accetta di partecipare a questo studio?",
        "consent_yes": "Ho letto le informazioni e accetto di partecipare.",
        "consent_no": "Non accetto di partecipare.",
        "default_consent": (
            "Questo studio è condotto da ricercatori che confrontano come persone e modelli linguistici risolvono "
            "gli stessi compiti. La partecipazione è volontaria e può interromperla in qualsiasi momento chiudendo "
            "la finestra. Conserviamo le Sue risposte e il Suo ID Prolific, non il Suo nome, e pubblichiamo solo "
            "risultati anonimi e aggregati."
        ),
        "consent_facts": "Lo studio dura circa {minutes} minuti. Per la partecipazione riceve {pay}.",
        "consent_contact": "Domande sullo studio: {contact}.",
        "workload_minutes": "Durata prevista: circa {minutes} minuti in tutto.",
        "workload_dond": "Lei negozia una volta con un'altra parte; ogni parte può inviare fino a {messages} messaggi.",
        "workload_social_eval": (
            "Lei valuta {units} conversazioni, con {ratings} valutazioni ciascuna; ogni valutazione richiede una "
            "motivazione di almeno {min_chars} caratteri."
        ),
        "workload_payoff_reasoning_eval": "Lei giudica {units} testi di ragionamento, frase per frase.",
        "workload_bias_tests": "Lei risponde a {units} domande.",
        "completion_title": "Grazie!",
        "completion_body": "Ha completato lo studio.",
        "completion_code": "Il Suo codice di completamento",
        "completion_redirect": "Tra {seconds} secondi sarà riportato a Prolific.",
        "completion_button": "Torni subito a Prolific",
        "screenout_title": "Grazie per l'interesse",
        "screenout_body": "Non può proseguire con questo studio.",
        "screenout_code": "Torni su Prolific e inserisca questo codice",
        "progress": "Elemento {current} di {total}",
        "entry_title": "Con questo link lo studio non può iniziare",
        "entry_missing_id": (
            "Il link che ha aperto non contiene il Suo ID Prolific, quindi non possiamo assegnarLe un posto in "
            "questo studio."
        ),
        "entry_malformed_id": (
            "Il link che ha aperto contiene un ID Prolific non valido, quindi non possiamo assegnarLe un posto in "
            "questo studio."
        ),
        "entry_retry": (
            "Torni su Prolific e apra lo studio da lì, senza modificare il link. Se succede di nuovo, scriva al "
            "ricercatore tramite Prolific."
        ),
        "entry_researcher": (
            "Per chi fa ricerca e vuole provare il proprio studio: apra il link di prova nella pagina dei link "
            "della sessione nell'area admin, che crea un ID Prolific per Lei."
        ),
        "full_title": "Tutti i posti sono occupati",
        "full_body": (
            "Ci dispiace: tutti i posti di questo studio sono già stati assegnati, quindi questa volta non può "
            "partecipare."
        ),
        "full_return": (
            "Restituisca lo studio su Prolific (scelga «Return submission») così non sarà penalizzato. Non inserisca "
            "alcun codice di completamento."
        ),
        "full_contact": "Se pensa che si tratti di un errore, scriva al ricercatore tramite Prolific.",
        "entry_wrong_study": (
            "Il link che ha aperto appartiene a un altro studio, quindi non possiamo assegnarLe un posto in questo."
        ),
        "admission_title": "In questo momento molte persone stanno iniziando questo studio",
        "admission_body": (
            "La preghiamo di tenere aperta questa pagina. Controlla di nuovo da sola, più spesso man mano che si "
            "avvicina il Suo turno, e La porta allo studio appena c'è posto. Si entra nell'ordine di arrivo."
        ),
        "admission_kept": "Attendendo non perde nulla: il Suo link e il Suo ID Prolific restano validi.",
        "admission_now": "Riprova ora",
        "admission_expected": "Il Suo turno è previsto tra circa {minutes} minuti.",
        "admission_expected_soon": "Il Suo turno è previsto entro un minuto.",
        "busy_title": "Troppi nuovi partecipanti dalla Sua connessione",
        "busy_body": (
            "Molte persone hanno appena iniziato questo studio dalla stessa connessione internet che usa Lei, quindi "
            "al momento non possiamo assegnarLe un posto. Riprovi tra qualche minuto."
        ),
        "requests_title": "Troppe richieste",
        "requests_body": (
            "Il Suo browser ha richiesto questa pagina moltissime volte in poco tempo. Attenda un poco: questa pagina "
            "riapre da sola lo studio al punto in cui si trovava."
        ),
        "requests_again": "Riapri la pagina",
        "live_too_fast": "Sta inviando messaggi troppo in fretta. Attenda {seconds} secondi e riprovi.",
    },
}


SHARED_LANGUAGES = tuple(MESSAGES)


def messages(language: str | None) -> dict[str, str]:
    """The shared pages' texts in ``language`` (``en``, ``de`` or ``it``); unknown languages fall back to English.

    >>> messages("de")["consent_title"]
    'Einwilligung'
    >>> messages(None)["consent_title"]
    'Consent'
    """
    return MESSAGES.get(language or "en", MESSAGES["en"])
