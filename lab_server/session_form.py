"""The admin's Create-session page in a researcher's words: each session key shows its label and one line of help.

oTree's form lists each editable key of a config by its raw name (``max_messages``). The words come from the keys'
models, where each key is defined once (``study_flow.config.key_words``: each field's title and description, of the
app's model and of the shared keys'); the key's name stays beside the label, as the REST API and settings.py use it.
"""

from __future__ import annotations

import html


def labelled_row(row_html: str, key: str, words: dict[str, tuple[str, str]]) -> str:
    """oTree's form row of ``key`` with the key's label and help in place of the bare name (escaped).

    >>> labelled_row("<tr><td><b>max_messages</b><td><input name='max_messages'></td>", "max_messages",
    ...              {"max_messages": ("Messages per player", "Before both <must> propose.")})
    "<tr><td><b>Messages per player</b> <code>max_messages</code><br><small class='text-muted'>Before both &lt;must&gt; propose.</small><td><input name='max_messages'></td>"
    """
    found = words.get(key)
    if not found:
        return row_html
    label, help_text = found
    shown = (
        f"<b>{html.escape(label)}</b> <code>{html.escape(key)}</code>"
        f"<br><small class='text-muted'>{html.escape(help_text)}</small>"
    )
    return row_html.replace(f"<b>{key}</b>", shown, 1)


def _in_words(editable_field_html):
    def editable_field_html_in_words(self, field_name):
        from study_flow.config import key_words

        # this config's apps only: two apps may word one key differently (social_eval's reservation holds a conversation)
        words = key_words(list(self.get("app_sequence") or []) or None)
        return labelled_row(editable_field_html(self, field_name), field_name, words)

    return editable_field_html_in_words


def install() -> None:
    from .otree_internals import replace

    replace("otree.session:SessionConfig.editable_field_html", _in_words)
