"""DoND's fixed rules (backend/dond/rules.py)."""

from __future__ import annotations

import pytest

from backend.dond import rules


def test_must_propose_after_the_last_message_or_the_others_proposal():
    assert not rules.must_propose(4, other_has_proposed=False, max_messages=5)
    assert rules.must_propose(5, other_has_proposed=False, max_messages=5)
    assert rules.must_propose(0, other_has_proposed=True, max_messages=5)
    with pytest.raises(ValueError):
        rules.must_propose(-1, other_has_proposed=False, max_messages=5)
