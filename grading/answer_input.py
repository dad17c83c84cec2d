"""Turning a posted form into the raw answer that is stored exactly as entered.

A matrix grid posts one field per cell (``cell-<row>-<col>``); every other input
posts a single ``answer`` field (a derivation: one step per line; a multiple choice:
several ``answer`` values). Nothing here judges the answer — that is the parser's job.
"""

from __future__ import annotations

import json
import re

# ASCII digits only (\d would take ٣ for 3), and nothing after them (not even a newline).
CELL_FIELD = re.compile(r"^cell-([0-9]{1,3})-([0-9]{1,3})\Z")
MAX_GRID_SIDE = 64


def raw_answer_from_post(post, *, max_bytes: int) -> tuple[object, str | None]:
    """(raw answer, None) or (None, a message saying what is wrong with the form)."""
    repeated = _repeated_cell(post)
    if repeated:
        return None, f"The grid's cell in {repeated} was sent twice: send each cell once."
    cells = _cells_from_post(post)
    if cells:
        if max(max(r, c) for r, c in cells) >= MAX_GRID_SIDE:
            return None, f"A grid answer may have at most {MAX_GRID_SIDE} rows and columns."
        answer = _grid_from_cells(cells)
    else:
        values = post.getlist("answer")
        if not values:
            return None, "No answer was entered."
        answer = values[0] if len(values) == 1 and post.get("multiple") != "1" else values
    if len(repr(answer).encode()) > max_bytes:
        return None, f"That answer is too long (more than {max_bytes // 1000} kB)."
    return answer, None


def _cells_from_post(post) -> dict[tuple[int, int], str]:
    cells = {}
    for name in post:
        match = CELL_FIELD.match(name)
        if match:
            cells[(int(match[1]), int(match[2]))] = post.get(name, "").strip()
    return cells


def _repeated_cell(post) -> str | None:
    """The first grid cell posted more than once (cell-0-1 twice, or as cell-0-1 and cell-00-01):
    which value the student meant cannot be told, so the form is refused, not read."""
    seen = set()
    for name in post:
        match = CELL_FIELD.match(name)
        if not match:
            continue
        position = (int(match[1]), int(match[2]))
        if position in seen or len(post.getlist(name)) > 1:
            return f"row {position[0] + 1}, column {position[1] + 1}"
        seen.add(position)
    return None


def _grid_from_cells(cells: dict[tuple[int, int], str]) -> list[list[str]]:
    rows = 1 + max(r for r, _ in cells)
    cols = 1 + max(c for _, c in cells)
    return [[cells.get((r, c), "") for c in range(cols)] for r in range(rows)]


def answer_text(raw_answer) -> str:
    """A stored answer as one line of text, the way it is shown and exported."""
    if isinstance(raw_answer, str):
        return raw_answer
    return json.dumps(raw_answer, ensure_ascii=False, separators=(",", ": "))


def answer_line(raw_answer) -> str:
    """A stored answer on one line for a person to read: a matrix's rows as
    ``[a, b; c, d]``, a list as ``[a, b]``, a text as it is (exports keep ``answer_text``)."""
    if isinstance(raw_answer, list) and raw_answer and all(isinstance(row, list) for row in raw_answer):
        return "[" + "; ".join(", ".join(_cell_text(cell) for cell in row) for row in raw_answer) + "]"
    if isinstance(raw_answer, list) and not any(isinstance(cell, list | dict) for cell in raw_answer):
        return "[" + ", ".join(_cell_text(cell) for cell in raw_answer) + "]"
    return answer_text(raw_answer)


def _cell_text(cell) -> str:
    return cell if isinstance(cell, str) else answer_text(cell)


# Answers typeset for staff pages: one LaTeX string per line of a derivation, one otherwise.
TYPESET_TYPES = frozenset({"matrix", "numeric", "symbolic", "matrix_expression", "derivation"})
MAX_TYPESET_STEPS = 30


def answer_latex(*, answer_type: str, raw_answer, options: dict) -> list[str]:
    """How the parser read a stored answer, as LaTeX (what the student's preview showed).

    Empty for types with nothing to typeset (choice, free text) and for answers that do
    not parse; the page then shows the text alone.
    """
    from grading.core import answers

    if answer_type not in TYPESET_TYPES:
        return []
    if answer_type == "derivation":
        if not isinstance(raw_answer, str):
            return []
        steps = [line.strip() for line in raw_answer.splitlines() if line.strip()]
        read = [answers.parse("derivation", step, options) for step in steps[:MAX_TYPESET_STEPS]]
        return [step.preview_latex for step in read if step.preview_latex]
    try:
        parsed = answers.parse(answer_type, raw_answer, options)
    except ValueError:  # options of an old version the parser no longer reads
        return []
    return [parsed.preview_latex] if parsed.preview_latex and not parsed.error else []


def answer_shown(*, variant, part_key: str, raw_answer) -> dict:
    """A stored answer of one of ``variant``'s parts as a person reads it: ``text`` as
    entered (a choice's own words, not its key) and ``latex``, how the parser read maths
    (empty when there is nothing to typeset or the part is gone from the spec). The part's
    options are the ones its grade used, kept per process (``variant_part_options``)."""
    from exercises.engine import ExpressionError
    from exercises.engine.reference import fill_plain
    from exercises.specs import variant_part_options, version_spec

    try:
        part = version_spec(variant.exercise_version).part(part_key)
    except KeyError:
        return {"text": answer_text(raw_answer), "latex": []}
    if part.type == "choice":
        chosen = next((choice for choice in part.choices if choice["key"] == raw_answer), None)
        text = str(fill_plain(chosen["text"], variant.params)) if chosen else answer_text(raw_answer)
        return {"text": text, "latex": []}
    try:
        options = variant_part_options(variant, part_key)
    except (KeyError, ValueError, ExpressionError):
        return {"text": answer_text(raw_answer), "latex": []}
    return {"text": answer_text(raw_answer), "latex": answer_latex(answer_type=part.type, raw_answer=raw_answer, options=options)}



CLIENT_KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
CLIENT_KEY_HEADER = "Idempotency-Key"
CLIENT_KEY_FIELD = "submission_key"


def client_key_checked(key: str | None) -> tuple[str, str | None]:
    """(the sender's key for this answer or "", None), or ("", what is wrong with it).

    A client that may resend an answer (its response lost) names it with an
    ``Idempotency-Key`` header (a plain form: a ``submission_key`` field): 8 to 64
    letters, digits, ``-`` or ``_``, new for each answer, the same for each retry of it."""
    if not key:
        return "", None
    if not CLIENT_KEY.match(key):
        return "", "The answer's key must be 8 to 64 letters, digits, '-' or '_'."
    return key, None
