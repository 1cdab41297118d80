"""oTree's own words on participant pages follow the session's ``language`` key, not the server's LANGUAGE_CODE.

oTree translates its built-in words once, for the whole server (``LANGUAGE_CODE`` in settings.py): a German session
on an English server showed "Next" on every button, "Time left to complete this page:" above every timer, "Please
fix the errors." after a refused form, "Please wait" on wait pages and "Powered by oTree" under every page. Here each
of them takes the session's language (``study_flow.MESSAGES``: ``next``, ``timer_text``, ``form_errors``,
``wait_*``, ``powered_by``), on every app's pages, without the app doing anything:

- ``{{ next_button }}`` without a label says ``next`` in the session's language (a label given stays as given);
- a page's context gets the session's words where it holds oTree's English default; a page's own ``timer_text``,
  wait-page ``title_text``/``body_text`` or ``error_message`` stays as the page set it.

Every page's context also gets ``study_heading``, the title at its top. An English session sees exactly oTree's
own words. Texts: ``study_flow/texts.py``.
"""

from __future__ import annotations

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
    if form is not None and getattr(form, "errors", None) and not getattr(form, "non_field_error", None):
        form.non_field_error = words["form_errors"]  # shown instead of oTree's "Please fix the errors."
    return context


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
        found.setdefault("study_heading", study_heading(session))
        return translate_context(found, session_language(session))

    return get_context_data_in_language


def install() -> None:
    from .otree_internals import replace

    replace("otree.templating.nodes:NextButton.wrender", _translated_next_button)
    replace("otree.views.abstract:FormPageOrInGameWaitPage.get_context_data", _translated_context)
