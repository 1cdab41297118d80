"""Where our bundled social_eval material lives, per language: the one lookup of the default rubric and episodes.

English: ``backend/social/data/sotopia_rubric.json`` and ``backend/social/data/episodes/``. German and Italian (written
by us, "Sie" / "Lei"; the same dimensions, scales, episode ids and gold ratings): the same names under
``backend/social/data/de/`` and ``backend/social/data/it/``. Every bundled file declares its ``language``
(`backend.core.material_language`). A language without bundled material falls back to English (and the creation
check then refuses it unless the mismatch is confirmed).

>>> bundled_rubric_path("de").relative_to(DATA_DIR).as_posix(), bundled_episodes_path("it").relative_to(DATA_DIR).as_posix()
('de/sotopia_rubric.json', 'it/episodes')
>>> bundled_rubric_path("en") == bundled_rubric_path("fr") == DATA_DIR / "sotopia_rubric.json"
True
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED_LANGUAGES = ("en", "de", "it")
# The value of the session key ``episodes`` that names the bundled sample episodes in the session's language.
SAMPLES = "samples"


def _folder(language: str | None) -> Path:
    base = (language or "en").split("-")[0].lower()
    return DATA_DIR / base if base in BUNDLED_LANGUAGES and base != "en" else DATA_DIR


def bundled_rubric_path(language: str | None) -> Path:
    """The bundled Sotopia rubric in ``language`` (English when we ship none in it)."""
    return _folder(language) / "sotopia_rubric.json"


def bundled_episodes_path(language: str | None) -> Path:
    """The folder of bundled sample episodes (regular and gold) in ``language`` (English when we ship none in it)."""
    return _folder(language) / "episodes"
