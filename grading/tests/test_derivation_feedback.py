"""The typeset steps of a derivation's feedback: as written, with rules in words, sanitised.

A step is ``<code data-tex="LaTeX">typed text</code>``: the page script typesets the LaTeX in
place of the text; without JavaScript the student reads what they typed."""

import pytest

from grading.core.answers import check
from grading.derivation_feedback import _step_body, derivation_steps_html
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
RIGHT = ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", "d_k σ_q² σ_k²"]


def _feedback(steps):
    grade = check("derivation", TARGET, steps, MOMENTS)
    return {"message": grade.feedback, "details": grade.details}


def test_each_step_is_typeset_with_its_rule_in_words():
    html = derivation_steps_html(_feedback(RIGHT), show_verdicts=True, show_instances=False)
    assert html.count("<li>") == 4
    assert r'<code data-tex="d_{k} \operatorname{Var}\left[q_{m} k_{m}\right]">d_k Var(q_m k_m)</code>' in html
    assert r"\(" not in html  # no LaTeX source in the text a reader without JavaScript sees
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
    assert html == ('<ul><li><code data-tex="&lt;/span&gt;&lt;img src=x onerror=alert(1)&gt;">&lt;script&gt;alert(1)'
                    "&lt;/script&gt;</code><br><em>By &lt;b onclick=x&gt;.</em><br>Here: <code>&lt;script&gt;x"
                    "&lt;/script&gt;</code></li></ul>")


# _step_body: (step, exact HTML). The typed text is what a reader without JavaScript sees;
# the LaTeX waits in data-tex for the page script (KaTeX). Both are escaped.
STEP_BODIES = [
    ({"step": 1, "kind": "restatement", "text": "Var(q·k)", "latex": r"\operatorname{Var}\left(q\cdot k\right)"},
     r'<code data-tex="\operatorname{Var}\left(q\cdot k\right)">Var(q·k)</code>'
     "<br><em>Restates the question: no rule applied.</em>"),
    # no LaTeX (feedback stored before the checker kept it): the typed text, with no data-tex
    ({"step": 2, "kind": "rule", "text": "d_k Var(q_m k_m)", "rule_words": ["a sum of identical terms"]},
     "<code>d_k Var(q_m k_m)</code><br><em>By a sum of identical terms.</em>"),
    ({"step": 2, "kind": "rule", "text": "x", "latex": ""}, "<code>x</code><br><em>By a named rule.</em>"),
    # quotes, <, > and & cannot leave the attribute or the element
    ({"step": 3, "kind": "wrong", "text": 'a < b & "c"', "latex": '" onmouseover="alert(1)" x="<b>&amp;'},
     '<code data-tex="&quot; onmouseover=&quot;alert(1)&quot; x=&quot;&lt;b&gt;&amp;amp;">a &lt; b &amp; '
     "&quot;c&quot;</code><br><strong>✗ The first step that does not follow.</strong> "
     "<em>Does not follow: not equal to the line before.</em>"),
    ({"step": 4, "kind": "rule", "text": "</code><script>x</script>", "latex": "a'b", "rule_words": ["r"]},
     '<code data-tex="a&#x27;b">&lt;/code&gt;&lt;script&gt;x&lt;/script&gt;</code><br><em>By r.</em>'),
]


@pytest.mark.parametrize("step, html", STEP_BODIES)
def test_a_step_body_is_the_typed_text_with_its_latex_in_data_tex(step, html):
    assert _step_body(step, 3, False, chained=False) == html


def test_a_step_body_survives_the_sanitiser_with_only_its_data_tex():
    step = {"step": 3, "kind": "wrong", "text": 'a < b & "c"', "latex": '" onmouseover="alert(1)" x="<b>&amp;'}
    html = derivation_steps_html({"details": {"steps": [step]}}, show_verdicts=True, show_instances=False)
    assert html == ('<ul><li><code data-tex="&quot; onmouseover=&quot;alert(1)&quot; x=&quot;&lt;b&gt;&amp;amp;">a '
                    "&lt; b &amp; \"c\"</code><br><strong>✗ The first step that does not follow.</strong> <em>Does not "
                    "follow: not equal to the line before.</em></li></ul>")


# One item per line of the answer box, a chained line shown as typed with its steps under it.
CHAINED = "Var(q·k) = Σ_m Var(q_m k_m) = d_k Var(q_m k_m)\n\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k σ_q² σ_k²"
LINE_1 = "Line 1: <code>Var(q·k) = Σ_m Var(q_m k_m) = d_k Var(q_m k_m)</code>"
LINE_3 = "Line 3: <code>d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k σ_q² σ_k²</code>"


def typed_step(typed: str, latex: str) -> str:
    """A step as the feedback writes it: the typed text, its LaTeX in data-tex."""
    return f'<code data-tex="{latex}">{typed}</code>'


VAR_QK = typed_step("Var(q·k)", r"\operatorname{Var}\left[q \cdot k\right]")
SUM_VAR = typed_step("Σ_m Var(q_m k_m)", r"\sum_{m=1}^{d_{k}} \operatorname{Var}\left[q_{m} k_{m}\right]")
D_K_VAR = typed_step("d_k Var(q_m k_m)", r"d_{k} \operatorname{Var}\left[q_{m} k_{m}\right]")
MOMENTS_LINE = typed_step("d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
                          r"d_{k} \left(\mathbb{E}\left[q_{m}^{2}\right] \mathbb{E}\left[k_{m}^{2}\right] - "
                          r"\mathbb{E}\left[q_{m}\right]^{2} \mathbb{E}\left[k_{m}\right]^{2}\right)")
PLUS_MOMENTS_LINE = typed_step("d_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2)",
                               r"d_{k} \left(\mathbb{E}\left[q_{m}^{2}\right] \mathbb{E}\left[k_{m}^{2}\right] + "
                               r"\mathbb{E}\left[q_{m}\right]^{2} \mathbb{E}\left[k_{m}\right]^{2}\right)")
SIGMAS_TYPED = typed_step("d_k σ_q² σ_k²", r"d_{k} \sigma_{q}^{2} \sigma_{k}^{2}")
SIGMAS_TARGET = typed_step(TARGET, r"d_{k} \sigma_{q}^{2} \sigma_{k}^{2}")
E_Q2 = typed_step("d_k E[q_m^2]", r"d_{k} \mathbb{E}\left[q_{m}^{2}\right]")
SUM_RULE = "By the variance of a sum of independent terms (the sum of their variances)."
IDENTICAL = "By a sum of identical terms (their number times one term)."
DEFINITION = "By the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]."
MARK = "<strong>✗ The first step that does not follow.</strong> "


@pytest.mark.parametrize(
    "answer, html",
    [
        # right: two typed lines (the second after a blank line is line 3), each with its steps under it
        (CHAINED,
         f"<ul><li>{LINE_1}<ol><li>{VAR_QK}<br><em>Restates the question: no rule applied.</em></li>"
         f"<li>{SUM_VAR}<br><em>{SUM_RULE}</em></li><li>{D_K_VAR}<br><em>{IDENTICAL}</em></li></ol></li>"
         f"<li>{LINE_3}<ol><li>{MOMENTS_LINE}<br><em>{DEFINITION}</em></li>"
         f"<li>{SIGMAS_TYPED}<br><em>By substituting the declared mean or variance.</em></li>"
         "</ol></li></ul>"),
        # right: a line with one step is shown typeset, by its number
        (["Var(q·k) = Σ_m Var(q_m k_m)", "d_k Var(q_m k_m)"],
         "<ul><li>Line 1: <code>Var(q·k) = Σ_m Var(q_m k_m)</code><ol><li>" + VAR_QK + "<br><em>Restates the question: "
         f"no rule applied.</em></li><li>{SUM_VAR}<br><em>{SUM_RULE}</em></li></ol></li>"
         f"<li>Line 2: {D_K_VAR}<br><em>{IDENTICAL}</em></li></ul>"),
        # wrong inside a chained line: the step is marked under its line, against the expression before it
        ("Var(q·k) = d_k Var(q_m k_m) = d_k E[q_m^2]",
         "<ul><li>Line 1: <code>Var(q·k) = d_k Var(q_m k_m) = d_k E[q_m^2]</code><ol><li>" + VAR_QK +
         "<br><em>Restates the question: no rule applied.</em></li><li>" + D_K_VAR + "<br><em>By the variance of a "
         "sum of independent terms (the sum of their variances) and a sum of identical terms (their number times one "
         "term).</em></li><li>" + E_Q2 + "<br>" + MARK +
         "<em>Does not follow: not equal to the expression before it.</em></li></ol></li></ul>"),
        # wrong on its own line after a chained one: against the line before
        ("Var(q·k) = d_k Var(q_m k_m)\nd_k E[q_m^2]",
         "<ul><li>Line 1: <code>Var(q·k) = d_k Var(q_m k_m)</code><ol><li>" + VAR_QK + "<br><em>Restates the "
         "question: no rule applied.</em></li><li>" + D_K_VAR + "<br><em>By the variance of a sum of independent "
         "terms (the sum of their variances) and a sum of identical terms (their number times one term).</em></li>"
         "</ol></li><li>Line 2: " + E_Q2 + "<br>" + MARK +
         "<em>Does not follow: not equal to the line before.</em></li></ul>"),
        # not justified inside a chained line
        ("d_k Var(q_m k_m) = d_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2) = " + TARGET,
         "<ul><li>Line 1: <code>d_k Var(q_m k_m) = d_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2) = "
         "d_k*sigma_q^2*sigma_k^2</code><ol><li>" + D_K_VAR + "<br><em>By the variance of a sum of independent terms "
         "(the sum of their variances) and a sum of identical terms (their number times one term).</em></li>"
         "<li>" + PLUS_MOMENTS_LINE + "<br>" + MARK +
         "<em>Not justified: the value agrees, but no rule leads here from the expression before it.</em></li>"
         f"<li>{SIGMAS_TARGET}<br><em>By substituting the declared mean or variance.</em>"
         "</li></ol></li></ul>"),
        # invalid: an answer that cannot be read has no steps to show
        ("Var(q·k) = E[(", ""),
        ("", ""),
    ],
)
def test_the_steps_of_a_typed_line_are_shown_under_that_line(answer, html):
    assert derivation_steps_html(_feedback(answer), show_verdicts=True, show_instances=False) == html


def test_only_the_first_step_of_a_chained_line_carries_the_line_as_typed():
    grade = check("derivation", TARGET, CHAINED, MOMENTS)
    assert [(step["step"], step["line"], step.get("line_text")) for step in grade.details["steps"]] == [
        (1, 1, "Var(q·k) = Σ_m Var(q_m k_m) = d_k Var(q_m k_m)"), (2, 1, None), (3, 1, None),
        (4, 3, "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k σ_q² σ_k²"), (5, 3, None)]


def test_feedback_stored_before_lines_were_kept_still_groups_by_line():
    # No line_text: the line is rebuilt from its steps; no line at all: one item per step.
    steps = [{"step": 1, "line": 1, "kind": "restatement", "text": "a"}, {"step": 2, "line": 1, "kind": "rule",
             "text": "b", "rule_words": ["r"]}, {"step": 3, "kind": "wrong", "text": "c"}]
    html = derivation_steps_html({"details": {"steps": steps, "first_wrong_step": 3}}, show_verdicts=True,
                                 show_instances=False)
    assert html == ("<ul><li>Line 1: <code>a = b</code><ol><li><code>a</code><br><em>Restates the question: no rule "
                    "applied.</em></li><li><code>b</code><br><em>By r.</em></li></ol></li><li><code>c</code><br>"
                    + MARK + "<em>Does not follow: not equal to the line before.</em></li></ul>")


def test_a_hostile_typed_line_is_escaped_and_sanitised():
    steps = [{"step": 1, "line": "<b onclick=x>1", "kind": "rule", "text": "x", "latex": "x",
              "line_text": "<script>alert(1)</script> = </code><img src=x onerror=alert(1)>"},
             {"step": 2, "line": "<b onclick=x>1", "kind": "rule", "text": "y", "latex": "y"}]
    html = derivation_steps_html({"details": {"steps": steps}}, show_verdicts=True, show_instances=False)
    assert "<script" not in html and "<img" not in html and "<b " not in html
    assert ("<li>Line &lt;b onclick=x&gt;1: <code>&lt;script&gt;alert(1)&lt;/script&gt; = &lt;/code&gt;&lt;img src=x "
            "onerror=alert(1)&gt;</code><ol>") in html


def test_the_result_template_filter_renders_the_grouped_lines_unescaped_once():
    from types import SimpleNamespace

    from django.template import Context, Template

    template = Template("{% load derivation_feedback %}{{ feedback|derivation_steps:visibility }}")
    feedback = _feedback("Var(q·k) = d_k Var(q_m k_m) = d_k E[q_m^2]")
    visibility = SimpleNamespace(correctness=True, solutions=False)
    shown = template.render(Context({"feedback": feedback, "visibility": visibility}))
    assert shown == derivation_steps_html(feedback, show_verdicts=True, show_instances=False)
    assert shown.startswith("<ul><li>Line 1: <code>Var(q·k) = d_k Var(q_m k_m) = d_k E[q_m^2]</code><ol><li>")
    hidden = template.render(Context({"feedback": feedback, "visibility": SimpleNamespace(correctness=False)}))
    assert hidden == ""
