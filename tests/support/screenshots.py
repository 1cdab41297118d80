"""The documentation's pictures, as the tests read them: the script that takes them (``docs/screenshots.py``, loaded
as a module: `shots`), the pictures the docs name, and how much of a picture is one colour."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from harness import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "docs" / "screenshots.py"
NAMED = re.compile(r"screenshots/([A-Za-z0-9_.-]+\.png)")


def _load_script():
    spec = importlib.util.spec_from_file_location("docs_screenshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shots = _load_script()


def named_pictures(root: Path = PROJECT_ROOT) -> dict[str, list[str]]:
    """Picture name -> the pages (README.md and docs/**/*.md) that show it."""
    found: dict[str, list[str]] = {}
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        for name in NAMED.findall(page.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(str(page.relative_to(root)))
    return found


def blank_share(path: Path) -> float:
    """The share of the picture's pixels in its most common colour (1.0: one colour, nothing to see)."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGB")
        counts = pixels.getcolors(pixels.width * pixels.height)
        return max(count for count, _ in counts) / (pixels.width * pixels.height)
