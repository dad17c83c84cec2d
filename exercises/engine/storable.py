"""Which values read from an exercise file can be stored as JSON (PostgreSQL ``jsonb``).

YAML reads more than JSON holds: ``.nan``, ``.inf`` and numbers past ±1.8e308 become
non-finite floats, an unquoted ``2024-01-01`` becomes a date, ``!!binary`` gives bytes,
a hexadecimal or sexagesimal literal can give a whole number too long to write in
decimal, and a double-quoted ``"\\0"`` or ``"\\ud800"`` gives a NUL character or half of a
UTF-16 surrogate pair, which jsonb (NUL) and UTF-8 (surrogates) refuse. Such a value used
to pass validation and fail only when the database stored the spec. Each is found here,
with the path of the field (or of the mapping whose key it is), so that every way a
source is stored (the editor, import, the API, the bank) refuses it with a message.
"""

from __future__ import annotations

import datetime
import math
import re
import sys
from dataclasses import dataclass

from .source import Path

SURROGATES = range(0xD800, 0xE000)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Unstorable:
    """One value that cannot be stored. ``path`` is the field's path; for a key,
    ``key_of`` is the path of the mapping that holds it (the problem is reported there)."""

    path: Path
    message: str
    key_of: Path | None = None


def unstorable_values(data, path: Path = ()) -> list[Unstorable]:
    """Every value in ``data`` (plain YAML data: mappings, lists, scalars) that JSON or
    PostgreSQL cannot store, in document order."""
    found: list[Unstorable] = []
    _walk(data, path, found)
    return found


def _walk(value, path: Path, found: list[Unstorable]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            problem = text_problem(key) if isinstance(key, str) else None
            if problem:
                found.append(Unstorable(path + (key,), f"the key {shown_text(key)} {problem}", key_of=path))
                continue
            _walk(item, path + (key,), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, path + (index,), found)
    else:
        problem = scalar_problem(value)
        if problem:
            found.append(Unstorable(path, problem))


def scalar_problem(value) -> str | None:
    """Why a single YAML scalar cannot be stored, or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, int):
        return _whole_number_problem(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return (
            f"is not a finite number ({yaml_float(value)}); write a finite number "
            "(NaN, infinity and numbers beyond ±1.8e308 cannot be stored)"
        )
    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"is read as a date ({value.isoformat()}); put it in quotes to make it text"
    if isinstance(value, (bytes, bytearray)):
        return "is binary data (!!binary), which an exercise file cannot hold"
    return f"is a {type(value).__name__} value, which cannot be stored"


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored (a NUL, or a UTF-16 surrogate code point), or None."""
    if "\x00" in text:
        return "contains a NUL character (U+0000), which cannot be stored; remove it"
    found = _SURROGATE.search(text)
    if found:
        return (
            f"contains U+{ord(found.group()):04X}, half of a UTF-16 surrogate pair, which is not a "
            "character; write the character itself (or \\U and its 8-digit code point)"
        )
    return None


def _whole_number_problem(value: int) -> str | None:
    limit = sys.get_int_max_str_digits()
    try:
        str(value)
    except ValueError:  # only past the interpreter's limit on decimal digits
        return f"is a whole number too long to store (more than {limit} digits)"
    return None


def yaml_float(value: float) -> str:
    """A non-finite float as YAML writes it."""
    if math.isnan(value):
        return ".nan"
    return ".inf" if value > 0 else "-.inf"


def shown_text(text: str) -> str:
    """``text`` quoted, with NUL and surrogates escaped (they cannot be shown or sent)."""
    escaped = "".join(
        f"\\u{ord(c):04x}" if c == "\x00" or ord(c) in SURROGATES else c for c in text
    )
    return f"'{escaped}'"
