"""The list of protections and their guarding tests (tests/support/protections.py) stays true: each protected text
is in its file once and each guarding test exists. Whether each test fails without its protection is shown by
``python -m tests.support.protections`` (it runs the tests, some with servers: not part of the suite's time)."""

from __future__ import annotations

import pytest

from harness import PROJECT_ROOT
from tests.support.protections import PROTECTIONS


@pytest.mark.parametrize("protection", PROTECTIONS, ids=lambda p: p.name)
def test_each_protection_is_where_the_list_says_and_its_test_exists(protection):
    text = (PROJECT_ROOT / protection.file).read_text(encoding="utf-8")
    assert text.count(protection.protected) == 1, f"{protection.name}: the protection moved; update its entry"
    assert protection.removed != protection.protected
    path, _, name = protection.test.partition("::")
    function = name.split("[")[0].rpartition(".")[2]  # a test, or the function of a doctest
    assert f"def {function}(" in (PROJECT_ROOT / path).read_text(encoding="utf-8")
