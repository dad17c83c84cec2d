"""One normal form for what names an account — a username or an e-mail address — applied
before it is stored, looked up or checked for uniqueness, on every path (sign-up, profile,
sign-in, roster import, the API).

NFKC folds look-alike forms (full-width letters, ligatures) into one; invisible characters
are removed: Unicode format characters (category Cf: zero-width spaces and joiners, bidi
marks, soft hyphens) and every Default_Ignorable_Code_Point, which also counts letters and
marks that show nothing (the Hangul fillers, variation selectors, the combining grapheme
joiner), so "\u3164student1" is "student1"; an e-mail address is case-folded, since no
mail system tells two addresses apart by case.

Look-alike usernames: ``username_skeleton`` is what a name looks like (Unicode TR39's
confusable skeleton), so a new name whose skeleton equals an existing one's ("ѕtudent1"
with a Cyrillic "ѕ" beside "student1") is refused; ``username_scripts_refusal`` refuses a
name mixing scripts that are not written together.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt), which
# ``unicodedata`` does not expose: code points a renderer shows as nothing.
DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)


def _invisible(char: str) -> bool:
    if unicodedata.category(char) == "Cf":
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE_RANGES)


def identifier_normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text or ""))
    text = "".join(char for char in text if not _invisible(char))
    # Once more: a mark removed (the combining grapheme joiner) may let neighbours compose.
    return unicodedata.normalize("NFKC", text).strip()


def email_normalise(text: str) -> str:
    return identifier_normalise(text).casefold()


# ---------------------------------------------------------------------------
# Look-alike usernames (Unicode TR39: confusables and mixed scripts)
# ---------------------------------------------------------------------------

# Scripts that are written together: Japanese mixes Han, Hiragana and Katakana; Chinese
# Han and Bopomofo; Korean Han and Hangul; each may stand beside Latin (TR39's "highly
# restrictive" level). Any other mixture (Latin with Cyrillic or Greek...) is refused.
SCRIPT_SETS_WRITTEN_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
SCRIPT_NEUTRAL = frozenset({"COMMON", "INHERITED"})  # digits, punctuation, combining marks
_BIDI_MARKS = dict.fromkeys(map(ord, "\u200e\u200f"))


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """character -> the one that stands for its class of look-alikes.

    From confusable_homoglyphs' table of Unicode's confusables.txt, which lists each pair in
    both directions: a character confusable with a single other one (which has others, or
    is a sequence such as "rn") maps to it; two characters confusable only with each other
    map to the smaller; a character with several look-alikes is its class's prototype."""
    from confusable_homoglyphs.confusables import confusables_data

    neighbours: dict[str, set[str]] = {}
    for key, entries in confusables_data.items():
        neighbours.setdefault(key.translate(_BIDI_MARKS), set()).update(
            entry["c"].translate(_BIDI_MARKS) for entry in entries
        )
    prototypes = {}
    for char, others in neighbours.items():
        if len(char) != 1 or len(others) != 1:
            continue
        (other,) = others
        if len(other) > 1 or len(neighbours.get(other, ())) > 1:
            prototypes[char] = other
        else:
            prototypes[char] = min(char, other)
    return prototypes


def _skeleton_pass(text: str) -> str:
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(char, char) for char in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


@lru_cache(maxsize=65536)
def username_skeleton(username: str) -> str:
    """What a username looks like: equal for names a reader cannot tell apart.

    TR39's skeleton (every character replaced by its class's prototype: Cyrillic "ѕ" by
    "s", "1" and "I" by "l", "m" by "rn"), taken again after case-folding, since usernames
    are unique whatever their case ("Student1" and "studentl" look alike too)."""
    return _skeleton_pass(_skeleton_pass(identifier_normalise(username)).casefold())


def username_scripts_refusal(username: str) -> str:
    """Why a username mixes scripts that are not written together ("" when it does not)."""
    from confusable_homoglyphs.categories import unique_aliases

    scripts = unique_aliases(identifier_normalise(username)) - SCRIPT_NEUTRAL
    if len(scripts) <= 1 or any(scripts <= together for together in SCRIPT_SETS_WRITTEN_TOGETHER):
        return ""
    names = " and ".join(sorted(script.title() for script in scripts))
    return f"mixes letters of different scripts ({names}); use the letters of one script"
