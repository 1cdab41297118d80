"""The entry and exit flow every app shares: Prolific IDs, consent, screen-out, completion and progress.

A Prolific link lands on the room's welcome page (``_templates/global/RoomWelcome.html``), which keeps
``STUDY_ID`` and ``SESSION_ID`` in a short-lived cookie (oTree's room redirect drops every query parameter but the
label) and forwards at once, without a click. The first page the participant sees, ``Consent``, copies the cookie
into participant fields on its first request. The completion page shows the study's completion code and sends the
browser back to Prolific; a separate screen-out code covers declined consent and failed comprehension checks.

The page behaviours below are mixins: each app declares ``class Consent(study_flow.ConsentPage, Page)`` and so on,
so the logic lives here once. Nothing here imports oTree; the objects are duck-typed (``player.participant``,
``player.session.config``).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any
from urllib.parse import quote, unquote

from backend.core import session_keys

PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
STUDY_IDS_COOKIE = "study_ids"
# Prolific's study and session ids, completion codes and the "any" participant ID format share one shape.
_ID_PATTERN = re.compile(r"[A-Za-z0-9_\-]{1,64}")

MESSAGES = {
    "en": {
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
        "full_title": "All places are taken",
        "full_body": "Sorry: every place in this study has already been taken, so you cannot take part this time.",
        "full_return": (
            'Please return the study on Prolific (choose "Return submission") so that this does not count against '
            "you. Do not enter a completion code."
        ),
        "full_contact": "If you believe this is a mistake, send the researcher a message through Prolific.",
    },
    "de": {
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
    },
    "it": {
        "consent_title": "Consenso",
        "welcome_title": "Benvenuto",
        "consent_label": "Accetti di partecipare a questo studio?",
        "consent_yes": "Ho letto le informazioni e accetto di partecipare.",
        "consent_no": "Non accetto di partecipare.",
        "default_consent": (
            "Questo studio è condotto da ricercatori che confrontano come persone e modelli linguistici risolvono "
            "gli stessi compiti. La partecipazione è volontaria e puoi interromperla in qualsiasi momento chiudendo "
            "la finestra. Conserviamo le tue risposte e il tuo ID Prolific, non il tuo nome, e pubblichiamo solo "
            "risultati anonimi e aggregati."
        ),
        "completion_title": "Grazie!",
        "completion_body": "Hai completato lo studio.",
        "completion_code": "Il tuo codice di completamento",
        "completion_redirect": "Verrai reindirizzato a Prolific tra {seconds} secondi.",
        "completion_button": "Torna subito a Prolific",
        "screenout_title": "Grazie per l'interesse",
        "screenout_body": "Non puoi proseguire con questo studio.",
        "screenout_code": "Torna su Prolific e inserisci questo codice",
        "progress": "Elemento {current} di {total}",
        "entry_title": "Con questo link lo studio non può iniziare",
        "entry_missing_id": (
            "Il link che hai aperto non contiene il tuo ID Prolific, quindi non possiamo assegnarti un posto in "
            "questo studio."
        ),
        "entry_malformed_id": (
            "Il link che hai aperto contiene un ID Prolific non valido, quindi non possiamo assegnarti un posto in "
            "questo studio."
        ),
        "entry_retry": (
            "Torna su Prolific e apri lo studio da lì, senza modificare il link. Se succede di nuovo, scrivi al "
            "ricercatore tramite Prolific."
        ),
        "full_title": "Tutti i posti sono occupati",
        "full_body": (
            "Ci dispiace: tutti i posti di questo studio sono già stati assegnati, quindi questa volta non puoi "
            "partecipare."
        ),
        "full_return": (
            "Restituisci lo studio su Prolific (scegli «Return submission») così non verrai penalizzato. Non inserire "
            "alcun codice di completamento."
        ),
        "full_contact": "Se pensi che si tratti di un errore, scrivi al ricercatore tramite Prolific.",
    },
}


SHARED_LANGUAGES = tuple(MESSAGES)
CODE_PATTERN = f"(?:{_ID_PATTERN.pattern})?"  # a completion or screen-out code, or none

# The session key ``participant_id_format``: the shape a participant label (Prolific's PROLIFIC_PID) must have.
# ``prolific``: Prolific's IDs, 24 lowercase hex digits. ``any``: 1-64 letters, digits, - or _ (pilots, other panels).
PARTICIPANT_ID_FORMATS = {
    "prolific": re.compile(r"[0-9a-f]{24}"),
    "any": _ID_PATTERN,
}
# No label outside this shape is ever stored, whatever the entry path (oTree's own column holds 100 characters).
SAFE_LABEL = re.compile(r"[A-Za-z0-9_\-]{1,100}")
_ENTRY_PAGES = {
    "missing": ("entry_title", "entry_missing_id", "entry_retry"),
    "malformed": ("entry_title", "entry_malformed_id", "entry_retry"),
    "full": ("full_title", "full_body", "full_return", "full_contact"),
}


def participant_id_problem(label: str | None, *, id_format: str = "prolific") -> str | None:
    """What is wrong with a participant label for ``id_format``: ``"missing"``, ``"malformed"`` or None (fine).

    >>> participant_id_problem("5f3c2a1b9d8e7f6a5b4c3d2e")
    >>> participant_id_problem("")
    'missing'
    >>> participant_id_problem('"><script>alert(1)</script>')
    'malformed'
    >>> participant_id_problem("pilot_07", id_format="any"), participant_id_problem("pilot_07")
    (None, 'malformed')
    """
    if id_format not in PARTICIPANT_ID_FORMATS:
        raise ValueError(
            f"The participant ID format must be one of {', '.join(PARTICIPANT_ID_FORMATS)}, not {id_format!r}."
        )
    if not label:
        return "missing"
    return None if PARTICIPANT_ID_FORMATS[id_format].fullmatch(label) else "malformed"


def entry_page_texts(reason: str, *, language: str | None) -> dict[str, Any]:
    """The title and paragraphs of the page shown instead of the study when a link cannot start it.

    ``reason`` is a result of ``participant_id_problem`` or ``"full"`` (every place of the session is taken).

    >>> page = entry_page_texts("full", language="de")
    >>> page["title"], len(page["paragraphs"]), page["language"]
    ('Alle Plätze sind vergeben', 3, 'de')
    >>> entry_page_texts("missing", language="fr")["language"]
    'en'
    """
    if reason not in _ENTRY_PAGES:
        raise ValueError(f"The entry page reason must be one of {', '.join(_ENTRY_PAGES)}, not {reason!r}.")
    language = language if language in MESSAGES else "en"
    title, *paragraphs = (MESSAGES[language][key] for key in _ENTRY_PAGES[reason])
    return dict(title=title, paragraphs=paragraphs, language=language, reason=reason)


def validate_shared_config(config: dict[str, Any]) -> None:
    """Check (and normalise in place) the session keys every app shares; ``ValueError`` names the first bad key.

    Runs before a session is created (``lab_server/creation.py``). Keys an app does not use may be absent.

    >>> config = {"language": "en", "completion_redirect_seconds": "5", "completion_code": "C1"}
    >>> validate_shared_config(config); config["completion_redirect_seconds"]
    5
    >>> validate_shared_config({"completion_code": "=cmd|' /C calc'!A0"})
    Traceback (most recent call last):
    ...
    ValueError: The session key 'completion_code' must be text of letters, digits, - or _ (at most 64 characters), not "=cmd|' /C calc'!A0".
    """

    def code(key):
        return session_keys.text(config, key, max_chars=64, pattern=CODE_PATTERN, describe="letters, digits, - or _")

    checks = {
        "study_title": lambda key: session_keys.text(config, key, max_chars=200),
        "consent": lambda key: session_keys.flag(config, key),
        "consent_text": lambda key: session_keys.text(config, key, max_chars=20_000),
        "completion_code": code,
        "screenout_code": code,
        "completion_redirect_seconds": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=600),
        "language": lambda key: session_keys.choice(config, key, SHARED_LANGUAGES),
        "participant_id_format": lambda key: session_keys.choice(config, key, PARTICIPANT_ID_FORMATS),
        "llm_model": lambda key: session_keys.text(config, key, max_chars=200, pattern=r"[^\x00-\x1f]+"),
        "llm_temperature": lambda key: session_keys.number(config, key, minimum=0, maximum=2),
        "llm_timeout_s": lambda key: session_keys.number(config, key, minimum=1, maximum=600),
        "llm_max_retries": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=10),
        "llm_max_tokens": lambda key: session_keys.whole_number(config, key, minimum=1, maximum=200_000),
        "llm_reasoning_tokens": lambda key: session_keys.whole_number(config, key, minimum=0, maximum=200_000),
        "real_world_currency_per_point": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
        "participation_fee": lambda key: session_keys.number(config, key, minimum=0, maximum=1e6),
    }
    problems = []
    for key, check in checks.items():
        if key not in config or (key in ("llm_max_tokens", "llm_reasoning_tokens") and not config.get(key)):
            continue  # absent, or unset (each call's own budget; no extra room for thinking)
        try:
            value = check(key)
        except ValueError as error:
            problems.append(str(error))
            continue
        if key not in ("real_world_currency_per_point", "participation_fee"):  # oTree keeps its currency types
            config[key] = value
    if problems:
        raise ValueError(" ".join(problems))


def messages(language: str | None) -> dict[str, str]:
    """The shared pages' texts in ``language`` (``en``, ``de`` or ``it``); unknown languages fall back to English.

    >>> messages("de")["consent_title"]
    'Einwilligung'
    >>> messages(None)["consent_title"]
    'Consent'
    """
    return MESSAGES.get(language or "en", MESSAGES["en"])


def completion_url(code: str) -> str:
    """Prolific's completion URL for a completion or screen-out code.

    >>> completion_url("C1A2B3")
    'https://app.prolific.com/submissions/complete?cc=C1A2B3'
    """
    if not code or not _ID_PATTERN.fullmatch(code):
        raise ValueError(f"The completion code {code!r} must be 1-64 letters, digits, '-' or '_'.")
    return PROLIFIC_COMPLETION_URL.format(code=quote(code))


def parse_study_ids_cookie(raw: str | None, *, participant_label: str | None) -> dict[str, str]:
    """Read the IDs the welcome page stored, if they belong to this participant.

    The cookie holds JSON ``{"pid": ..., "study_id": ..., "session_id": ...}`` (URL-encoded). It is ignored when its
    PID differs from the participant's label (a stale cookie from another study in the same browser) and any value
    that is not a plain identifier is dropped.

    >>> raw = '%7B%22pid%22%3A%22abc%22%2C%22study_id%22%3A%22S1%22%2C%22session_id%22%3A%22X9%22%7D'
    >>> parse_study_ids_cookie(raw, participant_label="abc")
    {'study_id': 'S1', 'prolific_session_id': 'X9'}
    >>> parse_study_ids_cookie(raw, participant_label="someone-else")
    {}
    >>> parse_study_ids_cookie("[" * 5000, participant_label="abc")  # a forged cookie nested too deep to parse
    {}
    """
    if not raw:
        return {}
    try:
        data = json.loads(unquote(raw))
    except (ValueError, RecursionError):  # a cookie is the participant's to forge, nesting included
        return {}
    if not isinstance(data, dict) or (data.get("pid") or "") != (participant_label or ""):
        return {}
    found = {}
    for source, target in (("study_id", "study_id"), ("session_id", "prolific_session_id")):
        value = data.get(source)
        if isinstance(value, str) and _ID_PATTERN.fullmatch(value):
            found[target] = value
    return found


def _config(player) -> dict[str, Any]:
    return player.session.config


def _vars(player) -> dict[str, Any]:
    return player.participant.vars


def app_name(player) -> str:
    return type(player).__module__.split(".")[0]


def is_first_app(player) -> bool:
    return _config(player)["app_sequence"][0] == app_name(player) and player.round_number == 1


def in_last_app(player) -> bool:
    """Whether the player belongs to the session's last app."""
    return _config(player)["app_sequence"][-1] == app_name(player)


def is_last_round(player) -> bool:
    """Whether this is the last round of the player's app."""
    app_module = sys.modules[type(player).__module__]
    return player.round_number == getattr(getattr(app_module, "C", None), "NUM_ROUNDS", 1)


def tasks_over(player) -> bool:
    """Whether the participant has no task left in this app, by the app's own ``tasks_over(player)`` if it has one.

    The completion page is then shown at once: walking through every remaining round to the last one would have
    oTree load the player row of each skipped page, which made the final submit the slowest page of a study.
    """
    hook = getattr(sys.modules[type(player).__module__], "tasks_over", None)
    return bool(hook(player)) if hook else False


def is_active(player) -> bool:
    """Whether the participant may see the task pages: not screened out (declined consent, failed a check)."""
    return not _vars(player).get("screened_out", False)


def screen_out(player, reason: str) -> None:
    """Send the participant to the screen-out page with ``reason`` stored (e.g. ``declined_consent``)."""
    participant_vars = _vars(player)
    participant_vars["screened_out"] = True
    participant_vars["screenout_reason"] = reason


def set_progress(player, *, done: int, total: int) -> None:
    """Record how many items of ``total`` the participant has finished (shown by the progress bar)."""
    if total < 0 or not 0 <= done <= max(total, 0):
        raise ValueError(f"Progress must satisfy 0 <= done <= total, got done={done} and total={total}.")
    participant_vars = _vars(player)
    participant_vars["progress_done"] = int(done)
    participant_vars["progress_total"] = int(total)


def progress(player) -> dict[str, Any] | None:
    """The progress bar's state (``Item 3 of 10``), or None when the app set no total."""
    participant_vars = _vars(player)
    total = participant_vars.get("progress_total") or 0
    if total <= 0:
        return None
    done = min(participant_vars.get("progress_done") or 0, total)
    current = min(done + 1, total)
    text = messages(_config(player).get("language")).get("progress", "")
    return dict(
        done=done,
        total=total,
        current=current,
        percent=round(100 * done / total),
        text=text.format(current=current, total=total),
    )


def record_arrival(participant, cookies: dict[str, str]) -> None:
    """Store the Prolific IDs on the participant once, on the first page's first request."""
    participant_vars = participant.vars
    if participant_vars.get("prolific_pid") is None:
        participant_vars["prolific_pid"] = participant.label or ""
    if not participant_vars.get("study_id"):
        found = parse_study_ids_cookie(cookies.get(STUDY_IDS_COOKIE), participant_label=participant.label)
        participant_vars.update(found)
        participant_vars.setdefault("study_id", "")
        participant_vars.setdefault("prolific_session_id", "")


def identifiers(participant) -> dict[str, str]:
    """The identifiers a researcher joins exports on, for one participant (empty where Prolific gave none).

    >>> from types import SimpleNamespace
    >>> identifiers(SimpleNamespace(code="ab12", label="5f3c", vars={"study_id": "S1"}))
    {'participant_code': 'ab12', 'prolific_pid': '5f3c', 'study_id': 'S1', 'prolific_session_id': ''}
    """
    participant_vars = participant.vars
    return dict(
        participant_code=participant.code,
        prolific_pid=participant_vars.get("prolific_pid") or participant.label or "",
        study_id=participant_vars.get("study_id") or "",
        prolific_session_id=participant_vars.get("prolific_session_id") or "",
    )


class ConsentPage:
    """Entry page of the first app: stores the Prolific IDs, then asks for consent (or just welcomes).

    The app's Player needs ``consent_given = models.BooleanField(...)``; see ``consent_field_kwargs``.
    """

    form_model = "player"
    template_name = "global/Consent.html"

    @staticmethod
    def is_displayed(player):
        return is_first_app(player)

    @staticmethod
    def get_form_fields(player):
        return ["consent_given"] if _config(player).get("consent", True) else []

    @staticmethod
    def vars_for_template(player):
        config = _config(player)
        text = messages(config.get("language"))
        return dict(
            study_text=text,
            consent_text=config.get("consent_text") or text["default_consent"],
            asks_consent=config.get("consent", True),
        )

    @staticmethod
    def before_next_page(player, timeout_happened):
        if not _config(player).get("consent", True):
            _vars(player)["consent_given"] = None
            return
        _vars(player)["consent_given"] = bool(player.consent_given)
        if not player.consent_given:
            screen_out(player, "declined_consent")

    def get_context_data(self, **context):
        # The only hook that sees the HTTP request: copy the welcome page's cookie into participant fields.
        record_arrival(self.participant, dict(self.request.cookies))
        return super().get_context_data(**context)


def consent_choices(language: str | None) -> list[list[Any]]:
    text = messages(language)
    return [[True, text["consent_yes"]], [False, text["consent_no"]]]


class ScreenOutPage:
    """Terminal page for participants who declined consent or failed a comprehension check."""

    template_name = "global/ScreenOut.html"

    @staticmethod
    def is_displayed(player):
        return not is_active(player)

    @staticmethod
    def vars_for_template(player):
        config = _config(player)
        code = config.get("screenout_code") or ""
        return dict(study_text=messages(config.get("language")), code=code, url=completion_url(code) if code else "")


class CompletionPage:
    """Terminal page of the last app: shows the completion code and returns the browser to Prolific."""

    template_name = "global/Completion.html"

    @staticmethod
    def is_displayed(player):
        return is_active(player) and in_last_app(player) and (is_last_round(player) or tasks_over(player))

    @staticmethod
    def vars_for_template(player):
        config = _config(player)
        _vars(player)["completed"] = True
        code = config.get("completion_code") or ""
        seconds = int(config.get("completion_redirect_seconds", 5))
        text = messages(config.get("language"))
        return dict(
            study_text=text,
            code=code,
            url=completion_url(code) if code else "",
            redirect_seconds=seconds,
            redirect_text=text["completion_redirect"].format(seconds=seconds),
        )
