"""What a plain form (no JavaScript) sent as an answer that was not taken, kept for one page.

Without JavaScript an answer that cannot be read, or is refused, comes back as a redirect
to the exercise page, which fills its inputs from the latest *stored* answer: what the
student just typed would be gone. So the fields of that answer form (the grid's cells, the
``answer`` values) are kept in the session with the message, keyed by variant and part,
and the next page of that variant takes them once, like a flash message. Only the answer
form's own fields are kept, never more than ``max_bytes`` of them, and only a few answers
at a time (an answer is taken by the page its redirect opens).

The session is any mutable mapping; nothing here imports Django.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from dataclasses import dataclass, field

from .answer_input import CELL_FIELD, MAX_GRID_SIDE

SESSION_KEY = "refused_answers"
MAX_KEPT_ANSWERS = 4


@dataclass(frozen=True)
class RefusedAnswer:
    """One answer form as it was sent: ``cells`` by ``(row, column)`` (the non-empty ones),
    ``answers`` (the ``answer`` values: a text, or the choices picked) and the ``error``
    that refused it; ``unreadable``: a format error, not a refusal for another reason (time
    up, part finished...)."""

    error: str
    unreadable: bool = True
    cells: dict[tuple[int, int], str] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)

    def cell(self, row: int, column: int) -> str:
        return self.cells.get((row, column), "")

    @property
    def text(self) -> str:
        """The one text typed (an input's or a textarea's), "" when several were sent."""
        return self.answers[0] if len(self.answers) == 1 else ""


def refused_answer_keep(
    session: MutableMapping, *, variant_id: int, part: str, post, error: str, unreadable: bool,
    max_bytes: int,
) -> bool:
    """Keep the answer form fields of ``post`` (a QueryDict) with ``error`` for the next
    page of ``variant_id``; False (nothing kept) when they are more than ``max_bytes``."""
    stored = {
        "error": error,
        "unreadable": unreadable,
        "cells": _typed_cells(post),
        "answers": [str(value) for value in post.getlist("answer")],
    }
    if len(json.dumps(stored, ensure_ascii=False).encode()) > max_bytes:
        return False
    kept = dict(session.get(SESSION_KEY) or {})
    key = _entry_key(variant_id, part)
    kept.pop(key, None)  # the newest goes last, the oldest is the first dropped
    kept[key] = stored
    session[SESSION_KEY] = dict(list(kept.items())[-MAX_KEPT_ANSWERS:])
    return True


def refused_answers_take(session: MutableMapping, *, variant_id: int) -> dict[str, RefusedAnswer]:
    """The kept answers of ``variant_id`` by part, removed from the session (shown once);
    the other variants' stay."""
    kept = session.get(SESSION_KEY)
    if not kept:
        return {}
    prefix = f"{variant_id}:"
    taken = {key[len(prefix):]: entry for key, entry in kept.items() if key.startswith(prefix)}
    if not taken:
        return {}
    rest = {key: entry for key, entry in kept.items() if not key.startswith(prefix)}
    if rest:
        session[SESSION_KEY] = rest
    else:
        del session[SESSION_KEY]
    return {part: _refused_answer(entry) for part, entry in taken.items()}


def _entry_key(variant_id: int, part: str) -> str:
    return f"{int(variant_id)}:{part}"


def _typed_cells(post) -> dict[str, str]:
    """The grid's non-empty cells as typed, by "row-column" (a session stores text keys)."""
    cells = {}
    for name in post:
        match = CELL_FIELD.match(name)
        if match and max(int(match[1]), int(match[2])) < MAX_GRID_SIDE:
            value = str(post.get(name, ""))
            if value:
                cells[f"{int(match[1])}-{int(match[2])}"] = value
    return cells


def _refused_answer(entry) -> RefusedAnswer:
    """A session's entry read back; anything malformed in it reads as nothing typed."""
    if not isinstance(entry, dict):
        return RefusedAnswer(error="")
    cells = {}
    raw_cells = entry.get("cells")
    for position, value in (raw_cells.items() if isinstance(raw_cells, dict) else ()):
        row, _, column = str(position).partition("-")
        if row.isdigit() and column.isdigit() and isinstance(value, str):
            cells[(int(row), int(column))] = value
    answers = entry.get("answers")
    if not isinstance(answers, list):
        answers = []
    error = entry.get("error")
    return RefusedAnswer(
        error=error if isinstance(error, str) else "",
        unreadable=entry.get("unreadable") is not False,
        cells=cells,
        answers=[value for value in answers if isinstance(value, str)],
    )
