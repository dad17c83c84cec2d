"""The typeset steps of a derivation's feedback: as written, with rules in words, sanitised."""

from grading.core.answers import check
from grading.derivation_feedback import derivation_steps_html
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
RIGHT = ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", "d_k σ_q² σ_k²"]


def _feedback(steps):
    grade = check("derivation", TARGET, steps, MOMENTS)
    return {"message": grade.feedback, "details": grade.details}


def test_each_step_is_typeset_with_its_rule_in_words():
    html = derivation_steps_html(_feedback(RIGHT), show_verdicts=True, show_instances=False)
    assert html.count("<li>") == 4
    assert r"\(d_{k} \operatorname{Var}" in html
    assert "<em>Restates the question: no rule applied.</em>" in html
    assert "By the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]." in html
    assert "k_m*q_m" not in html and "✗" not in html  # no canonical SymPy form, nothing marked


def test_the_first_unjustified_step_is_marked():
    steps = ["d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2)", TARGET]
    html = derivation_steps_html(_feedback(steps), show_verdicts=True, show_instances=False)
    second = html.split("<li>")[2]
    assert "<strong>✗ The first step that does not follow.</strong>" in second
    assert "Not justified: the value agrees, but no rule leads here from the line before." in second
    assert html.count("✗") == 1


def test_rule_instances_only_when_solutions_show_and_nothing_without_verdicts():
    shown = derivation_steps_html(_feedback(RIGHT), show_verdicts=True, show_instances=True)
    assert "Here: <code>Var(k_m*q_m) = -E[k_m*q_m]^2 + E[k_m^2*q_m^2]; E[k_m*q_m] = E[k_m]*E[q_m]</code>" in shown
    assert derivation_steps_html(_feedback(RIGHT), show_verdicts=False, show_instances=True) == ""
    assert derivation_steps_html({"message": "x", "details": {}}, show_verdicts=True, show_instances=True) == ""


def test_a_hostile_step_is_escaped_and_sanitised():
    feedback = {"details": {"steps": [{"step": 1, "kind": "rule", "text": "<script>alert(1)</script>",
                                       "latex": "</span><img src=x onerror=alert(1)>", "rule_words": ["<b onclick=x>"],
                                       "instances": ["<script>x</script>"]}]}}
    html = derivation_steps_html(feedback, show_verdicts=True, show_instances=True)
    assert "<script" not in html and "<img" not in html and "<b " not in html
    assert "&lt;img" in html and "&lt;script&gt;alert" not in html  # the LaTeX is shown, the raw text is not
    assert "<code>&lt;script&gt;x&lt;/script&gt;</code>" in html
