"""The JSON Lines grading contract behind ``manage.py check_answer``.

One JSON object per input line:
    {"type": "...", "expected": ..., "answer": ..., "options": {...}}
one JSON object per output line, in order, flushed at once:
    {"correct": bool, "score": float, "feedback": str, "misconception": str|null, "error": str|null}
``error`` is non-null exactly when the answer or the request is invalid. A bad line never
stops the stream; symbolic and derivation checks run in the sandbox so each line is
answered within a few seconds.
"""

from __future__ import annotations

import json
import re

from grading.core.grades import Grade, InvalidRequest
from grading.core.sandbox import SandboxError, check_isolated

SANDBOX_LIMITS = {"cpu_seconds": 3, "memory_mb": 512, "wall_seconds": 4}
MAX_LINE_CHARS = 1_000_000


def _error_record(message: str) -> dict:
    return {"correct": False, "score": 0.0, "feedback": message, "misconception": None, "error": message}


def _record(grade: Grade) -> dict:
    return {
        "correct": bool(grade.correct),
        "score": float(grade.score),
        "feedback": grade.feedback,
        "misconception": grade.misconception,
        "error": grade.error,
    }


def answer_line(line: str) -> dict:
    """The output record for one input line; never raises."""
    if len(line) > MAX_LINE_CHARS:
        return _error_record(f"request line too long ({len(line)} characters)")
    try:
        request = json.loads(line)
    except (ValueError, RecursionError) as problem:
        return _error_record(f"request is not valid JSON: {problem}")
    if not isinstance(request, dict):
        return _error_record("request must be a JSON object with type, expected, answer and options")
    missing = [field for field in ("type", "expected", "answer") if field not in request]
    if missing:
        return _error_record(f"request is missing {', '.join(missing)}")
    try:
        grade = check_isolated(
            str(request["type"]), request["expected"], request["answer"], request.get("options"), **SANDBOX_LIMITS
        )
    except (InvalidRequest, ValueError) as problem:
        return _error_record(f"invalid request: {problem}")
    except SandboxError as problem:
        return _error_record(f"the checker failed: {problem}")
    except Exception as problem:  # the stream must survive any single bad line
        return _error_record(f"the checker failed: {type(problem).__name__}: {problem}")
    return _record(grade)


_SURROGATES = re.compile("[\ud800-\udfff]")


def _utf8_safe(text: str) -> str:
    """Valid UTF-8 whatever was fed in: a lone surrogate echoed in feedback becomes U+FFFD."""
    return _SURROGATES.sub("\ufffd", text)


def answer_stream(lines, out) -> int:
    """Answer every non-blank line of ``lines`` on ``out``; returns the number answered."""
    answered = 0
    for line in lines:
        if not line.strip():
            continue
        out.write(_utf8_safe(json.dumps(answer_line(line), ensure_ascii=False)) + "\n")
        out.flush()
        answered += 1
    return answered
