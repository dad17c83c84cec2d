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
name mixing scripts that are not written together, and a name of another script made only
of letters that look like Latin ones ("ѕ306" with a Cyrillic "ѕ"), which would otherwise
keep the person really called "s306" from ever taking their name. Sign-up and the roster
import ask both questions.

A person's name (first and last name) is not an identifier, but is shown to others (the
people page, grading lists, CSV and XLSX files): ``name_normalise`` removes the same
invisible characters, so a right-to-left override cannot reverse what follows it and a
zero-width space cannot make two names that look the same differ.
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


# Scripts in which the zero-width non-joiner and joiner change how a word is written: those
# whose letters join (Persian writes "Alipour" as "علی" + non-joiner + "پور"), besides the
# Indic scripts, where a joiner follows a virama (``_joiner_spells``).
JOINING_SCRIPTS = frozenset({
    "ARABIC", "SYRIAC", "NKO", "MONGOLIAN", "MANDAIC", "MANICHAEAN", "PSALTER_PAHLAVI",
    "ADLAM", "HANIFI_ROHINGYA", "SOGDIAN", "OLD_UYGHUR", "CHORASMIAN",
})
JOINERS = frozenset("\u200c\u200d")  # zero-width non-joiner, zero-width joiner
VIRAMA = 9  # the canonical combining class of the Indic viramas


def _letter_or_mark(char: str) -> bool:
    return bool(char) and unicodedata.category(char)[0] in "LM"


def _joiner_spells(*, before: str, base: str, after: str) -> bool:
    """A non-joiner or joiner between ``before`` and ``after`` is part of the spelling:
    after a virama, or between letters of a joining script (``base``: the letter that
    ``before`` is, or is a mark on)."""
    if not (_letter_or_mark(before) and _letter_or_mark(after)):
        return False
    if unicodedata.combining(before) == VIRAMA:
        return True
    from confusable_homoglyphs.categories import alias

    return bool(base) and alias(base) in JOINING_SCRIPTS and alias(after) in JOINING_SCRIPTS | {"INHERITED"}


def name_normalise(text: str) -> str:
    """A person's name as it is stored and shown: in NFC (not NFKC, which would change what
    they typed: "ﬁ", "²"), without the invisible characters ``identifier_normalise`` drops
    (bidi controls such as the right-to-left override U+202E, zero-width spaces, fillers,
    tags), with any control character or run of white space made one space.

    The zero-width non-joiner and joiner are the exception where a script spells with them
    (``_joiner_spells``): the Persian "علی\\u200cپور" keeps its non-joiner,
    "Ada\\u200dLovelace" loses its joiner. Linear in the length of ``text``, whatever it holds."""
    text = unicodedata.normalize("NFC", str(text or ""))
    chars = [
        " " if unicodedata.category(char) == "Cc" else char
        for char in text if char in JOINERS or not _invisible(char)
    ]
    following, after = [""] * len(chars), ""  # the next character that is not a joiner
    for position in range(len(chars) - 1, -1, -1):
        following[position] = after
        if chars[position] not in JOINERS:
            after = chars[position]
    kept, before, base = [], "", ""
    for position, char in enumerate(chars):
        if char in JOINERS and not _joiner_spells(before=before, base=base, after=following[position]):
            continue
        kept.append(char)
        before = char
        if char not in JOINERS and unicodedata.category(char)[0] != "M":
            base = char
    return " ".join(unicodedata.normalize("NFC", "".join(kept)).split())


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
    """Why a new username is refused for its scripts ("" when it is not): it mixes scripts
    that are not written together, or it is written in another script with letters that
    all look like Latin ones (TR39's whole-script confusable: its skeleton is plain ASCII),
    such as "ѕ306" or "ѕсоре" in Cyrillic. Such a name is refused even when no "s306"
    exists yet: the person really called so could otherwise never take their own name."""
    from confusable_homoglyphs.categories import unique_aliases

    scripts = unique_aliases(identifier_normalise(username)) - SCRIPT_NEUTRAL
    if len(scripts) > 1 and not any(scripts <= together for together in SCRIPT_SETS_WRITTEN_TOGETHER):
        names = " and ".join(sorted(script.title() for script in scripts))
        return f"mixes letters of different scripts ({names}); use the letters of one script"
    if scripts and "LATIN" not in scripts and username_skeleton(username).isascii():
        names = " and ".join(sorted(script.title() for script in scripts))
        return f"is written in {names} letters that all look like Latin ones; type it in Latin letters, or choose another"
    return ""
