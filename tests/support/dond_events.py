"""The small instance and the event builders the DoND backend tests share (events as the app and self-play store
them: dicts with ``kind``, ``role``, ``text`` and, for proposals, the counts)."""

from __future__ import annotations

from backend.dond.instances import Instance

# Values to A: apple 2, knife 2, egg 0; to B: apple 0, knife 3, egg 4 (each side's items are worth 10 to it).
INSTANCE = Instance(("apple", "knife", "egg"), (3, 2, 1), (2, 2, 0), (0, 3, 4))


def message(role, text="hello"):
    return {"kind": "message", "role": role, "text": text}


def proposal(role, counts, text=""):
    return {"kind": "proposal", "role": role, "proposal": list(counts), "text": text}


def violation(role, text="oops", error_kind="format"):
    return {"kind": "violation", "role": role, "text": text, "error_kind": error_kind}
