"""One normal form for what names an account — a username or an e-mail address — applied
before it is stored, looked up or checked for uniqueness, on every path (sign-up, profile,
sign-in, roster import, the API).

NFKC folds look-alike forms (full-width letters, ligatures) into one; Unicode format
characters (category Cf: zero-width spaces and joiners, bidi marks, soft hyphens) are
invisible, so they are removed; an e-mail address is case-folded, since no mail system
tells two addresses apart by case.
"""

from __future__ import annotations

import unicodedata


def identifier_normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text or ""))
    return "".join(char for char in text if unicodedata.category(char) != "Cf").strip()


def email_normalise(text: str) -> str:
    return identifier_normalise(text).casefold()
