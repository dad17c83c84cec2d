"""Single- and multiple-choice answers keyed by choice identifiers.

Options: ``choices`` (the list of valid keys; without it any non-empty key is read),
``multiple`` (several keys may be right), ``partial_credit`` (multiple only: see
``partial_score``),
``choice_feedback`` ({key: text}: why that choice is wrong, said when it is picked).
Keys are matched exactly after trimming, falling back to a case-insensitive match.
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, invalid, right, wrong
from grading.core.safe_expr import without_invisible_characters

MAX_KEY_CHARS = 200


def _valid_keys(options: dict) -> list[str] | None:
    choices = options.get("choices")
    if choices is None:
        return None
    if not isinstance(choices, (list, tuple)) or not choices:
        raise InvalidRequest("option 'choices' must be a non-empty list of keys")
    return [str(key) for key in choices]


def _expected_keys(expected, options: dict) -> set[str]:
    items = expected if isinstance(expected, (list, tuple, set)) else [expected]
    keys = {str(item).strip() for item in items}
    if not keys or "" in keys:
        raise InvalidRequest("expected must be a choice key or a list of keys")
    valid = _valid_keys(options)
    if valid is not None and not keys <= set(valid):
        raise InvalidRequest(f"expected keys {sorted(keys - set(valid))} are not among the choices")
    if len(keys) > 1 and not options.get("multiple"):
        raise InvalidRequest("several expected keys need option 'multiple': true")
    return keys


def parse_keys(answer, options: dict) -> set[str]:
    if isinstance(answer, str):
        answer = _plain(answer)  # "A，B" typed with a full-width comma is "A,B"
        raw_items = answer.split(",") if options.get("multiple") else [answer]
    elif isinstance(answer, (list, tuple)):
        raw_items = list(answer)
    else:
        raise AnswerFormatError(f"expected a choice, got {type(answer).__name__}")
    if any(not isinstance(item, (str, int)) or isinstance(item, bool) for item in raw_items):
        raise AnswerFormatError("each choice must be a key such as 'A'")
    items = [_plain(str(item)).strip() for item in raw_items]
    items = [item for item in items if item]
    if not items:
        raise AnswerFormatError("no choice selected")
    if any(len(item) > MAX_KEY_CHARS for item in items):
        raise AnswerFormatError("a choice key is too long")
    if len(items) > 1 and not options.get("multiple"):
        raise AnswerFormatError("select exactly one choice")
    valid = _valid_keys(options)
    return {_known_key(item, valid) for item in items}


def _known_key(item: str, valid: list[str] | None) -> str:
    if valid is None or item in valid:
        return item
    folded = [key for key in valid if _plain(key).strip().casefold() == item.casefold()]
    if len(folded) == 1:
        return folded[0]
    raise AnswerFormatError(f"{item!r} is not one of the choices ({', '.join(valid)})")


def _plain(text: str) -> str:
    """Full-width letters and punctuation as ASCII (Ａ -> A), invisible characters left out:
    what a phone keyboard or a paste adds to a key. ASCII text is returned as it is."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", without_invisible_characters(text))


def check(expected, answer, options: dict) -> Grade:
    wanted = _expected_keys(expected, options)
    try:
        picked = parse_keys(answer, options)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    if picked == wanted:
        return right("Correct.")
    reasons = _distractor_feedback(picked - wanted, options)
    if not options.get("multiple"):
        return wrong(f"Not the right choice: {reasons[0]}" if reasons else "Not the right choice.",
                     picked_feedback=reasons)
    hits, misses = len(picked & wanted), len(picked - wanted)
    score = partial_score(hits, misses, wanted, _valid_keys(options)) if options.get("partial_credit") else 0.0
    return wrong(
        _selections_counted(hits, len(picked), len(wanted - picked)) + "".join(f" {reason}" for reason in reasons),
        score=min(score, 0.99),
        picked_feedback=reasons,
    )


def _selections_counted(hits: int, picked: int, missing: int) -> str:
    """"Not quite: 1 of your 2 selections is right and 1 right choice is missing." in words
    that agree with their numbers."""
    selections = "selection" if picked == 1 else "selections"
    verb = "is" if hits == 1 else "are"
    choices = "right choice is" if missing == 1 else "right choices are"
    return f"Not quite: {hits} of your {picked} {selections} {verb} right and {missing} {choices} missing."


def partial_score(hits: int, misses: int, wanted: set[str], valid: list[str] | None) -> float:
    """The share of the right keys picked, less a penalty per wrong key picked, never below 0.

    A wrong key costs as much as a right key earns (1 / number of right keys), or more when
    there are fewer wrong keys than right ones (1 / number of wrong keys): ticking every box
    then scores 0, never the share of the boxes that happen to be right (3 of 4 was 0.67)."""
    wrong_keys = len(set(valid) - wanted) if valid is not None else None
    penalty_base = min(len(wanted), wrong_keys) if wrong_keys else len(wanted)
    return float(max(Fraction(0), Fraction(hits, len(wanted)) - Fraction(misses, penalty_base)))


def _distractor_feedback(wrong_picks: set[str], options: dict) -> list[str]:
    feedback = options.get("choice_feedback") or {}
    if not isinstance(feedback, dict):
        raise InvalidRequest("option 'choice_feedback' must map choice keys to text")
    return [str(feedback[key]).strip() for key in sorted(wrong_picks) if str(feedback.get(key) or "").strip()]


def parse_answer(answer, options: dict) -> Parsed:
    try:
        keys = parse_keys(answer, options)
    except AnswerFormatError as problem:
        return Parsed(None, str(problem), None)
    return Parsed(sorted(keys), None, None)


def self_test(expected, options: dict) -> dict[str, list]:
    wanted = sorted(_expected_keys(expected, options))
    valid = _valid_keys(options) or wanted + ["__other__"]
    others = [key for key in valid if key not in wanted]
    right_answers = [wanted if options.get("multiple") else wanted[0]]
    wrong_answers = [others[0]] if others else []
    if options.get("multiple") and len(wanted) > 1:
        wrong_answers.append(wanted[:1])
    invalid_answers = [[], ""]
    if _valid_keys(options) is not None:
        invalid_answers.append("not-a-choice-key")
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
