"""Long hostile derivations are checked well inside the sandbox's CPU time, with the grade they
always had.

"29 lines of ten variances, none justified" (``Var(q_1) + … + Var(q_10)``, then
``Var(q_2) + … + Var(q_11)``, …) took 0.7-0.8 s of warm CPU here and 1.6-2.1 s on the CI
machine, against the sandbox's 2 s: the cost did not grow with the lines (only the first step
that is not justified is searched in full, the next few in a small search) but sat in that one
step, whose searches for rules forwards, backwards, deeper and for a known slip each ran to
their node limit before giving up. No rule brings in a random variable, so a step whose moments
hold one (q_11) that the step before does not have cannot be reached: the search now says so at
once. The shortcut must not change a search's answer: rules never invent a random variable, and
with or without the shortcut the searches give the same paths."""

import time

import pytest

from grading.core import moment_rules
from grading.core.answers import check
from grading.core.derivation import Canonicaliser, MAX_STEPS
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
WITHOUT_START = {key: value for key, value in MOMENTS.items() if key != "start"}
TEN = "10*sigma_q^2"
# Well below the sandbox's 2 s; the checker took 0.7-0.8 s here for 29 lines, 0.12-0.16 s now.
CPU_SECONDS = 0.5
NOT_JUSTIFIED_LINE_2 = (
    "Line 2 is not justified: its value agrees with line 1, but no rule leads from line 1 to it. The rules turn a "
    "moment into simpler ones; a line that undoes a rule, goes back to an earlier line, or only holds because of the "
    "declared means and variances is not a step.")


def ten_variances(lines: int, first_index: int) -> list[str]:
    """``lines`` lines of ten variances, each shifted by one index, then the result. The indices
    start at ``first_index`` so that no other check in this process has read these lines."""
    return [" + ".join(f"Var(q_{index})" for index in range(first, first + 10))
            for first in range(first_index, first_index + lines)] + ["10 sigma_q^2"]


def warm_checker():
    """The sandbox's checker processes serve many checks: their first symbolic work is done."""
    check("derivation", TARGET, ["Var(q·k)", "d_k Var(q_m k_m)", TARGET], MOMENTS)


@pytest.mark.parametrize("lines, error, feedback", [
    (29, None, NOT_JUSTIFIED_LINE_2),
    (60, "too many steps (61; the limit is 30)", None),
], ids=["29 lines and the result: graded", "60 lines and the result: refused, as before"])
def test_lines_of_ten_variances_none_justified_are_graded_well_inside_the_bound(lines, error, feedback):
    warm_checker()
    timings = []
    for attempt in range(3):  # the fastest of three fresh answers: a busy machine only slows one
        answer = ten_variances(lines, 1000 + 100 * attempt)
        started = time.process_time()
        grade = check("derivation", TEN, answer, WITHOUT_START)
        timings.append(time.process_time() - started)
        assert (grade.correct, grade.score, grade.error, grade.misconception, grade.feedback) == (
            False, 0.0, error, None, feedback or error)
        if error is None:
            assert grade.details["first_unjustified_step"] == 2
            kinds = [step["kind"] for step in grade.details["steps"]]
            assert kinds == ["start", "not_justified"] + ["unchecked"] * (lines - 1)
    assert min(timings) < CPU_SECONDS, timings


def test_fourteen_side_results_of_the_chain_ends_value_are_read_well_inside_the_bound():
    # Each chained line starts at the chain's value (10 σ_q²) from another quantity, and the last
    # line comes back to line 1: every one is a side result, each weighed against every later
    # line (before: line 2 was read as a step, not justified, in 0.6 s).
    warm_checker()
    first = " + ".join(f"Var(q_{index})" for index in range(2000, 2010))
    second_moments = " + ".join(f"E[q_{index}^2]" for index in range(2000, 2010))
    answer = [first] + [f"{second_moments} = " + " + ".join(f"Var(q_{index})" for index in range(shift, shift + 10))
                        for shift in range(2001, 2015)] + [first]
    started = time.process_time()
    grade = check("derivation", TEN, answer, WITHOUT_START)
    seconds = time.process_time() - started
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (
        False, 0.0, None, "The last step still contains Var(q_2000): finish the derivation with a formula in the "
                          "exercise's constants.")
    assert [step["kind"] for step in grade.details["steps"]] == ["start"] + ["lemma", "side"] * 14 + ["restatement"]
    assert seconds < CPU_SECONDS


def test_a_29_line_answer_is_the_longest_that_is_graded():
    assert len(ten_variances(29, 1)) == MAX_STEPS


# --------------------------------------------------------------------------- the shortcut changes no answer

UNIT = {"symbols": {"d_k": "positive"}, "random_variables": {"q": {"mean": 0, "variance": 1},
                                                             "k": {"mean": 0, "variance": 1}}}
# Steps of the score-variance derivations, the rules backwards and double sums included.
STEPS = [
    "Var(q·k)", "Σ_m Var(q_m k_m)", "d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)",
    "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)", "E[(q·k)^2] - E[q·k]^2", "E[(q·k)^2] - (d_k E[q_m k_m])^2",
    "d_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2", "Σ_i Σ_j Cov(q_i k_i, q_j k_j)",
    "Σ_i Var(q_i k_i) + Σ_{i≠j} Cov(q_i k_i, q_j k_j)", "Cov(q·k, q·k)", "Var(q_1) + Var(k_1)", "Var(q_1 + k_1)",
    "E[q_1 k_1] - E[q_1] E[k_1]", "Cov(q_1, k_1)", "E[q_1] E[k_1]", "E[q_1 k_1]", "E[q_1^2]", "Var(q_1) + E[q_1]^2",
    "Var(q_1) + Var(q_2) + Var(q_3)", "Var(q_2) + Var(q_3) + Var(q_4)", "Var(q_1 + q_2) + Var(q_3)",
]


def _random_in_moments(expression) -> set:
    return {symbol for moment in expression.atoms(*moment_rules.MOMENT_TYPES) for symbol in moment.free_symbols
            if moment_rules.is_random_symbol(symbol)}


@pytest.mark.parametrize("text", STEPS)
def test_no_rule_brings_in_a_random_variable(text):
    canonicaliser = Canonicaliser(UNIT)
    structure = canonicaliser.structure(text)
    before = structure.free_symbols
    rules = moment_rules.SEARCH_ORDER + moment_rules.REVERSE_RULES
    applied = 0
    for rule in rules:
        for moment, replacement in moment_rules.rewrites(structure, rule, canonicaliser.model.rules):
            after = _random_in_moments(moment_rules.canonical(structure.xreplace({moment: replacement})))
            # Only the indices m and n of a double sum are renamed (Cov(Σ X_m, Σ Y_m) -> Σ_m Σ_n Cov(X_m, Y_n)).
            invented = {symbol for symbol in after - before
                        if symbol.name[3:].partition("_")[2] not in moment_rules.RENAMED_INDICES}
            assert not invented, (text, rule, invented)
            applied += 1
    assert applied  # every step has a rule that applies to it


PAIRS = [(before, after) for before in STEPS for after in STEPS if before != after]


def test_the_search_gives_the_same_paths_with_and_without_the_shortcut(monkeypatch):
    canonicaliser = Canonicaliser(UNIT)
    key = canonicaliser.model.key
    search = moment_rules.rules_between.__wrapped__  # not the cache: both runs search
    lemma = (canonicaliser.structure("Var(q_m k_m)"), canonicaliser.structure("1"))
    arguments = [(canonicaliser.structure(before), canonicaliser.structure(after)) for before, after in PAIRS]
    shortcut = [search(before, after, key, 2, 60, (lemma,), True) for before, after in arguments]
    monkeypatch.setattr(moment_rules, "_invents_random", lambda start, goal, lemmas: False)
    in_full = [search(before, after, key, 2, 60, (lemma,), True) for before, after in arguments]
    assert shortcut == in_full
    assert sum(path is not None for path in shortcut) >= 30  # the pairs include steps the rules reach


def test_a_step_that_brings_in_a_random_variable_is_unreachable_at_once():
    canonicaliser = Canonicaliser(UNIT)
    key = canonicaliser.model.key
    first, second = (canonicaliser.structure(text) for text in ("Var(q_1) + Var(q_2)", "Var(q_2) + Var(q_3)"))
    assert moment_rules.rules_between(first, second, key, 2) is None
    assert moment_rules.rules_reaching(first, second, key) is None
    # A side result may bring it in: its sides count as what the step before has.
    lemma = (first, second)
    assert moment_rules.rules_between(first, second, key, 2, lemmas=(lemma,)) == ((moment_rules.LEMMA, first, second),)
