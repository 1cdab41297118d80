"""The released data of each reference system (../shared/data/<system>), or a skip that says where it was looked for."""

from __future__ import annotations

from pathlib import Path

import pytest


def released(shared_data: Path, system: str, *, must_hold: str = "") -> Path:
    """``shared_data/system``; the test is skipped, naming the place, when it (or ``must_hold`` in it) is absent."""
    folder = shared_data / system
    if not (folder / must_hold).exists() or not folder.is_dir():
        pytest.skip(f"the released {system} data is not at {folder / must_hold}; it comes with ../shared")
    return folder


@pytest.fixture(scope="session")
def dond_data(shared_data: Path) -> Path:
    return released(shared_data, "dond", must_hold="episodes.csv")


@pytest.fixture(scope="session")
def lelma(shared_data: Path) -> Path:
    return released(shared_data, "lelma")


@pytest.fixture(scope="session")
def sotopia(shared_data: Path) -> Path:
    return released(shared_data, "sotopia")
