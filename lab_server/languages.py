"""oTree's own words on participant pages follow the session's ``language`` key, not the server's LANGUAGE_CODE.

oTree translates its built-in words once, for the whole server (``LANGUAGE_CODE`` in settings.py): a German session
on an English server would show "Next" on every button, "Time left to complete this page:" above every timer, "Please
fix the errors." after a refused form, "Please wait" on wait pages and "Powered by oTree" under every page. Here each
of them takes the session's language (``study_flow.MESSAGES``: ``next``, ``timer_text``, ``form_errors``,
``wait_*``, ``powered_by``, ``field_*``, ``yes``/``no``), on every app's pages, without the app doing anything:

- ``{{ next_button }}`` without a label says ``next`` in the session's language (a label given stays as given);
- a page's context gets the session's words where it holds oTree's English default; a page's own ``timer_text``,
  wait-page ``title_text``/``body_text`` or ``error_message`` stays as the page set it;
- a refused field's oTree message ("This field is required.", "Number must be between 0 and 10.") and a yes/no
  field's default "Yes"/"No" are in the session's language.

Every page's context also gets ``study_heading``, the title at its top, and ``page_language``, the ``lang`` of its
``<html>`` (``_templates/otree/Base_UserFacing.html``). An English session sees exactly oTree's
own words. Texts: ``study_flow/texts.py``.
"""

from __future__ import annotations

import re

import study_flow


def session_language(session) -> str:
    """The session's ``language`` key (``en`` when the session has none or an unknown one)."""
    config = getattr(session, "config", None) or {}
    language = config.get("language") or "en"
    return language if language in study_flow.MESSAGES else "en"


def _english(key: str) -> str:
    return study_flow.MESSAGES["en"][key]


def _translated_next_button(wrender):
    def wrender_in_language(self, context, label=None):
        if label is None:
            language = session_language(context.get("session"))
            if language != "en":
                label = study_flow.messages(language)["next"]
        return wrender(self, context, label=label)

    return wrender_in_language


# Context keys oTree fills with an English default, and the text key each default has in study_flow.MESSAGES.
_DEFAULTS = {
    "timer_text": ("timer_text",),
    "title_text": ("wait_title",),
    "body_text": ("wait_one", "wait_many", "wait_group"),
}


def translate_context(context: dict, language: str) -> dict:
    """Replace, in a page's ``context``, oTree's English defaults by the words of ``language`` (in place).

    >>> context = {"timer_text": "Time left to complete this page:", "title_text": "Our own title"}
    >>> translate_context(context, "de")["timer_text"], context["title_text"]
    ('Verbleibende Zeit für diese Seite:', 'Our own title')
    """
    if language == "en":
        return context
    words = study_flow.messages(language)
    for name, keys in _DEFAULTS.items():
        for key in keys:
            if context.get(name) == _english(key):
                context[name] = words[key]
    if "powered_by_otree" in context:
        product = '<a href="https://www.otree.org/" target="_blank" class="link-secondary">oTree</a>'
        context["powered_by_otree"] = words["powered_by"].format(product_name=product)
    form = context.get("form")
    if form is not None:
        translate_form(form, words)
    return context


# The English messages oTree and its form library (wtforms) give a refused field, and the text key of each.
_FIELD_MESSAGES = [
    (re.compile(r"This field is required\.?"), "field_required"),
    (re.compile(r"Not a valid (?:integer|float|decimal) value\.?"), "field_number"),
    (re.compile(r"Number must be at least (?P<minimum>.+?)\."), "field_at_least"),
    (re.compile(r"Number must be at most (?P<maximum>.+?)\."), "field_at_most"),
    (re.compile(r"Number must be between (?P<minimum>.+?) and (?P<maximum>.+?)\."), "field_between"),
]


def field_message(message, words: dict[str, str]):
    """oTree's English message for a refused field in the language of ``words``; any other message as it is.

    >>> import study_flow
    >>> field_message("Number must be between 0 and 10.", study_flow.messages("de"))
    'Bitte geben Sie eine Zahl von 0 bis 10 ein.'
    >>> field_message("Ihr eigener Text.", study_flow.messages("de"))
    'Ihr eigener Text.'
    """
    if not isinstance(message, str):
        return message
    for pattern, key in _FIELD_MESSAGES:
        found = pattern.fullmatch(message.strip())
        if found:
            return words[key].format(**found.groupdict())
    return message


def translate_form(form, words: dict[str, str]) -> None:
    """A page's form in the language of ``words``: its fields' oTree messages and default Yes/No choices, and the
    line above a refused form (oTree's "Please fix the errors.", unless the page gave its own)."""
    yes_no = {"Yes": words["yes"], "No": words["no"]}
    for field in form if hasattr(form, "__iter__") else ():
        errors = getattr(field, "errors", None)
        if isinstance(errors, list):
            errors[:] = [field_message(message, words) for message in errors]
        choices = getattr(field, "choices", None)
        pairs = isinstance(choices, list) and all(isinstance(c, tuple | list) and len(c) == 2 for c in choices)
        if pairs and choices and {label for _, label in choices} <= set(yes_no):
            field.choices = [(value, yes_no[label]) for value, label in choices]
    if getattr(form, "errors", None) and not getattr(form, "non_field_error", None):
        form.non_field_error = words["form_errors"]


def study_heading(session) -> dict:
    """The title at the top of every participant page (``global/Page.html``): the session's ``study_title``, which is
    the researcher's own material (shown as written, marked ``data-material``), or our default in its language."""
    title = ((getattr(session, "config", None) or {}).get("study_title") or "").strip()
    if title:
        return dict(text=title, material=True)
    return dict(text=study_flow.messages(session_language(session))["study_title"], material=False)


def _translated_context(get_context_data):
    def get_context_data_in_language(self, **context):
        session = getattr(self, "session", None)
        found = get_context_data(self, **context)
        language = session_language(session)
        found.setdefault("study_heading", study_heading(session))
        found.setdefault("page_language", language)  # <html lang> (_templates/otree/Base_UserFacing.html)
        code = getattr(getattr(self, "participant", None), "code", None)
        if code:  # their "too many requests" page and live refusals (budgets) are in this language too
            from .budgets import remember_language, remember_live_budget

            remember_language(code, language)
            remember_live_budget(code, getattr(session, "config", None))  # their session's live budget, if it sets one
        return translate_context(found, language)

    return get_context_data_in_language


def install() -> None:
    from .otree_internals import replace

    replace("otree.templating.nodes:NextButton.wrender", _translated_next_button)
    replace("otree.views.abstract:FormPageOrInGameWaitPage.get_context_data", _translated_context)
