"""The ``bias_tests`` app's session settings, without oTree: one typed, checked object and the item file it names.

Session-config keys (the fields of ``BiasSettings``: default, bounds, label and help; ``settings.py`` spreads
``DEFAULTS`` into the app's configs and overrides what a config changes):

- ``item_file`` (``""``): the item file, relative to the project root or absolute; ``""`` is the bundled sample
  ``backend/bias/data/bias_items.json``.
- ``ask_confidence`` (``True``): a confidence slider (0-100) under every single-choice answer.
- ``order_seed`` (``1``, 0 to 10⁹): participant k's order of tests comes from ``(order_seed, k)``.

``checked_session`` runs before oTree creates any row (the app's ``validate_session_config``): it reads every key and
the item file and raises one ``ValueError`` naming every problem; ``bias_settings`` reads the keys alone.

>>> settings = bias_settings({"ask_confidence": "false", "order_seed": "7"})
>>> settings.ask_confidence, settings.order_seed, settings.item_file
(False, 7, '')
>>> bias_settings({"ask_confidence": "perhaps", "order_seed": -1})
Traceback (most recent call last):
...
ValueError: The session key 'ask_confidence' must be true or false, not 'perhaps'. The session key 'order_seed' must be a whole number from 0 to 1000000000, not -1.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backend.bias.items import DEFAULT_ITEMS_PATH, ItemSet, build_sequence, parse_items_text
from backend.core import material_language, researcher_files, session_keys

MAX_ORDER_SEED = 1_000_000_000


class BiasSettings(session_keys.Keys):
    # as the researcher wrote it, stripped; "" = the bundled sample
    item_file: session_keys.Text = session_keys.key("", "Tests file", max_chars=1000, pattern=r"[^\x00-\x1f]*")
    """Optional: your own tests (JSON); empty uses the bundled set."""
    ask_confidence: session_keys.Flag = session_keys.key(True, "Ask how sure")
    """Tick to show a 0-100 slider after each answer."""
    order_seed: session_keys.Whole = session_keys.key(1, "Order (seed)", ge=0, le=MAX_ORDER_SEED)
    """Person k's order of tests follows from this number and k: the same number repeats them."""


DEFAULTS: Mapping[str, Any] = BiasSettings().as_config()


def bias_settings(config: Mapping[str, Any]) -> BiasSettings:
    """The app's keys of ``config`` (missing keys take ``DEFAULTS``), typed; ValueError names every key at fault."""
    settings = session_keys.checked(BiasSettings, config)
    return settings.model_copy(update={"item_file": settings.item_file.strip()})


def normalised_config(settings: BiasSettings) -> dict[str, Any]:
    """The typed values of the keys a form or the REST API may send as text (``"7"`` -> 7), to store in the config."""
    return {"ask_confidence": settings.ask_confidence, "order_seed": settings.order_seed}


def item_file_path(item_file: str, *, project_root: Path) -> tuple[Path, str, str]:
    """The path of the item file ``item_file`` names (the bundled sample for ``""``), its name as the researcher wrote
    it, and how messages about reading it name it.

    >>> item_file_path("mine/items.json", project_root=Path("/study"))
    (PosixPath('/study/mine/items.json'), 'mine/items.json', "The item file 'mine/items.json' (session key 'item_file')")
    """
    if not item_file:
        return DEFAULT_ITEMS_PATH, DEFAULT_ITEMS_PATH.name, f"The bundled item file {DEFAULT_ITEMS_PATH.name!r}"
    path = Path(item_file)
    what = f"The item file {item_file!r} (session key 'item_file')"
    return (path if path.is_absolute() else project_root / path), item_file, what


def read_item_file(item_file: str, *, project_root: Path, max_versions: int) -> tuple[str, ItemSet]:
    """The item file's text and its checked items; ValueError names the key, the file, the item and the field.

    A file with more than ``max_versions`` test versions (the app's rounds), or whose tests cannot be ordered without
    showing a test's two versions back to back, is refused too.
    """
    path, source, what = item_file_path(item_file, project_root=project_root)
    text = researcher_files.read_text(path, what=what)
    items = parse_items_text(text, source=source, what=what)
    versions = sum(len(item.versions) for item in items.items)
    if versions > max_versions:
        raise ValueError(f"{what} holds {versions} test versions; this app shows at most {max_versions}.")
    build_sequence(items.items, seed=0)  # a set that cannot be ordered is refused now
    return text, items


def checked_session(
    config: Mapping[str, Any], *, project_root: Path, max_versions: int
) -> tuple[BiasSettings, str, ItemSet]:
    """The settings, the item file's text and its items; one ValueError naming every problem of the keys and the
    file (the file is read whenever ``item_file`` itself is usable, so both kinds of problem are named at once)."""
    problems, settings, item_file, text, items = [], None, None, None, None
    try:
        settings = bias_settings(config)
    except ValueError as error:
        problems.append(str(error))
    try:  # the file is read whenever item_file itself is usable, whatever the other keys
        item_file = bias_settings({"item_file": config.get("item_file", "")}).item_file
        text, items = read_item_file(item_file, project_root=project_root, max_versions=max_versions)
    except ValueError as error:
        problems += [str(error)] if item_file is not None else []
    if items is not None and item_file:  # our bundled file is English only so far: not checked yet
        try:
            material_language.check_material_languages(
                {item_file_path(item_file, project_root=project_root)[2]: items.language},
                language=material_language.session_language(config),
                allow_mismatch=material_language.mismatch_allowed(config),
            )
        except ValueError as error:
            problems.append(str(error))
    session_keys.refuse_problems(problems)
    return settings, text, items
