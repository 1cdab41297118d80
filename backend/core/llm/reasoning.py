"""A reasoning model's thinking, kept apart from its reply: ``<think>…</think>`` and ``[THINK]…[/THINK]`` blocks in
any letter case (also a closing tag with no opening one, when the chat template opened the block), split even when a
tag is cut across stream pieces, and the ``reasoning_content`` / ``reasoning`` fields of a message or delta."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# Thinking blocks in the text of a reply: <think>…</think> (DeepSeek, Qwen, most open models) and [THINK]…[/THINK]
# (Mistral's Magistral), in any letter case.


OPEN_TAGS, CLOSE_TAGS = ("<think>", "[think]"), ("</think>", "[/think]")


THINK_OPEN = re.compile("|".join(re.escape(tag) for tag in OPEN_TAGS), re.IGNORECASE)


THINK_CLOSE = re.compile("|".join(re.escape(tag) for tag in CLOSE_TAGS), re.IGNORECASE)


class ReasoningSplitter:
    """Separates thinking blocks (``<think>…</think>``, Mistral's ``[THINK]…[/THINK]``, in any letter case) from the
    visible text of a reply that arrives in pieces.

    ``feed(piece)`` returns the visible text that is certain so far (a possible start of a tag is held back);
    ``finish()`` returns the rest. ``reasoning`` collects the blocks' text. A closing tag with no opening one (the
    chat template opened the block in the prompt) makes everything before it reasoning: what was returned as
    visible before it is moved to ``reasoning`` and ``retracted`` is set. With ``hold=True`` nothing is returned
    before ``finish()``, so no thinking can be shown before its closing tag arrives.

    >>> splitter = ReasoningSplitter()
    >>> [splitter.feed(piece) for piece in ["<thi", "nk>I should", " offer.</TH", "INK>Deal."]]
    ['', '', '', 'Deal.']
    >>> splitter.finish(), splitter.reasoning, splitter.visible
    ('', 'I should offer.', 'Deal.')
    """

    def __init__(self, *, hold: bool = False) -> None:
        self.visible = ""
        self.reasoning = ""
        self.retracted = False
        self.hold = hold
        self._pending = ""
        self._inside = False
        self._held = ""

    def feed(self, piece: str) -> str:
        self._pending += piece
        shown = ""
        while self._pending:
            if self._inside:
                found = THINK_CLOSE.search(self._pending)
                if found is None:
                    cut = len(self._pending) - partial_tag_length(self._pending, CLOSE_TAGS)
                    self.reasoning += self._pending[:cut]
                    self._pending = self._pending[cut:]
                    break
                self.reasoning += self._pending[: found.start()]
                self._pending, self._inside = self._pending[found.end() :], False
                continue
            opening, closing = THINK_OPEN.search(self._pending), THINK_CLOSE.search(self._pending)
            if closing is not None and (opening is None or closing.start() < opening.start()):  # no opening tag
                self.reasoning += self.visible + self._held + shown + self._pending[: closing.start()]
                self.visible, self._held, shown, self.retracted = "", "", "", True
                self._pending = self._pending[closing.end() :]
                continue
            if opening is None:
                cut = len(self._pending) - partial_tag_length(self._pending, OPEN_TAGS + CLOSE_TAGS)
                shown += self._pending[:cut]
                self._pending = self._pending[cut:]
                break
            shown += self._pending[: opening.start()]
            self._pending, self._inside = self._pending[opening.end() :], True
        if self.hold:
            self._held += shown
            return ""
        return self._show(shown)

    def _show(self, text: str) -> str:
        if not self.visible:
            text = text.lstrip()  # the blank lines after a thinking block
        self.visible += text
        return text

    def finish(self) -> str:
        rest, self._pending = self._pending, ""
        if self._inside:  # an unclosed block (the limit cut the thinking short): all of it is reasoning
            self.reasoning += rest
            rest = ""
        held, self._held = self._held, ""
        return self._show(held + rest)


def partial_tag_length(text: str, tags: Sequence[str]) -> int:
    """How many characters at the end of ``text`` could begin one of ``tags`` (letter case ignored)."""
    lowered, longest = text.lower(), 0
    for tag in tags:
        for size in range(min(len(tag) - 1, len(lowered)), 0, -1):
            if lowered.endswith(tag[:size]):
                longest = max(longest, size)
                break
    return longest


def split_reasoning(content: str) -> tuple[str, str]:
    """``(visible, reasoning)`` of a whole reply.

    >>> split_reasoning("<think>Two apples are worth little.</think>\\n\\nI propose: 2 books.")
    ('I propose: 2 books.', 'Two apples are worth little.')
    >>> split_reasoning("They want hats.</think>Deal.")
    ('Deal.', 'They want hats.')
    """
    splitter = ReasoningSplitter()
    splitter.feed(content)
    splitter.finish()
    return splitter.visible.strip(), splitter.reasoning.strip()


def reasoning_field(holder: Any) -> str:
    """A message's or delta's separate reasoning text (``reasoning_content``: vLLM, DeepSeek, llama.cpp;
    ``reasoning``: OpenRouter, Ollama); ``holder`` is the client's object or a streamed delta's JSON as a dict.

    >>> reasoning_field({"content": None, "reasoning_content": "First, 2 + 2."})
    'First, 2 + 2.'
    """
    for name in ("reasoning_content", "reasoning"):
        if isinstance(holder, dict):
            value = holder.get(name)
            if isinstance(value, str) and value:
                return value
            continue
        value = getattr(holder, name, None)
        if value is None and getattr(holder, "model_extra", None):
            value = holder.model_extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""
