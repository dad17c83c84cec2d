"""The heatmap after every graded weights/output attempt: the student's own weights with
the off cells marked and a sharper/flatter hint; the correct weights only once the part is
solved or the solution policy releases them; kept on reload in the attempt history."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from courses.models import AssignmentItem, SolutionPolicy
from exercises import engine
from exercises.models import Variant
from grading.core import attention
from grading.models import Submission

BANK = Path(__file__).resolve().parents[2] / "exercises" / "bank"
V_INDEPENDENT = [[2.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [1.0, 0.0, 0.0, 1.0]]


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )


@pytest.fixture
def variant(client, item, django_user_model):
    client.force_login(django_user_model.objects.get(username="student1"))
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    # Every test here reads sharper/flatter hints, so each starts from the chapter's numbers.
    Variant.objects.filter(pk=variant.pk).update(params=chapter_params(variant), rendered={})
    variant.refresh_from_db()
    return variant


def weights(variant, *, scaled: bool) -> np.ndarray:
    p = variant.params
    result = attention.attention(p["Q"], p["K"], p["V"], scale=None if scaled else 1.0)
    return result.weights[p["q"]]


def as_text(row) -> str:
    return "[" + ", ".join(f"{value:.4f}" for value in row) + "]"


@pytest.fixture
def answer(client, django_capture_on_commit_callbacks):
    def post(variant, part, row):
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("submit", args=[variant.pk, part]), {"answer": as_text(row)})
        submission = Submission.objects.filter(variant=variant, part=part).latest("attempt")
        return client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()

    return post


def cells(html: str, title: str) -> list[str]:
    figure = html.split(f'<caption class="aq-heatmap__title">{title}</caption>')[1].split("</figure>")[0]
    return re.findall(r'<td class="aq-heatmap__cell[^"]*">([0-9.]+)', figure)


def off_marks(html: str, title: str) -> int:
    figure = html.split(f'<caption class="aq-heatmap__title">{title}</caption>')[1].split("</figure>")[0]
    return figure.count("is-off")


def test_a_wrong_answer_shows_my_weights_with_off_cells_and_hint_but_not_the_correct_ones(variant, answer):
    unscaled, scaled = weights(variant, scaled=False), weights(variant, scaled=True)
    html = answer(variant, "weights", unscaled)
    assert cells(html, "Your attention weights") == [f"{w:.4f}" for w in unscaled]
    off = sum(1 for a, b in zip(unscaled.round(4), scaled) if abs(a - b) > 5e-5)
    assert off_marks(html, "Your attention weights") == off
    assert f"{off} of 4 weights are off" in html
    assert 'data-sharpness="sharper"' in html and "sharper than expected" in html
    assert "Correct attention weights" not in html
    shown = set(re.findall(r"\d\.\d{4}", html))
    leaked = {f"{w:.4f}" for w in scaled} - {f"{w:.4f}" for w in unscaled}
    assert shown & leaked == set()  # not one correct weight the student did not enter
    assert "shown here once you solve the part" in html


def test_uniform_weights_are_flatter_and_sums_other_than_one_are_named(variant, answer):
    assert 'data-sharpness="flatter"' in answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    result = answer(variant, "weights", [0.5, 0.5, 0.5, 0.5]).split('id="history-wrap-weights"')[0]
    assert "yours add up to 2.0" in result
    assert "data-sharpness" not in result


def test_weight_on_the_wrong_key_is_named_not_called_sharper(variant, answer):
    scaled = weights(variant, scaled=True)
    top = int(np.argmax(scaled))
    wrong_key = (top + 1) % 4
    row = [0.0] * 4
    row[wrong_key] = 1.0
    result = answer(variant, "weights", row).split('id="history-wrap-weights"')[0]
    assert "data-sharpness" not in result
    assert f"Your largest weight is on key {wrong_key}; the highest score is key {top}&#x27;s" in result


def test_solving_the_part_reveals_the_correct_weights_beside_mine(variant, answer):
    scaled = weights(variant, scaled=True)
    answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    html = answer(variant, "weights", scaled)
    assert cells(html, "Correct attention weights") == [f"{w:.4f}" for w in scaled]
    assert off_marks(html, "Your attention weights") == 0
    # The earlier wrong attempt, in the history, now has the correct weights beside it too
    # (the solving attempt is the result block's, not the history's).
    history = html.split('id="history-wrap-weights"')[1]
    assert history.count("Correct attention weights") == 1


def test_the_always_policy_reveals_the_correct_weights_after_a_wrong_answer(item, variant, answer):
    item.assignment.solution_policy = SolutionPolicy.ALWAYS
    item.assignment.save()
    html = answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    assert cells(html, "Correct attention weights") == [f"{w:.4f}" for w in weights(variant, scaled=True)]


def chapter_params(variant) -> dict:
    """The variant with the chapter's numbers (scores 5, 3, 4, 4): a drawn variant may score
    its keys so evenly that uniform weights are within the tolerance of "as sharp"."""
    spec = engine.load_spec((BANK / "attention-weights-one-query.yaml").read_text())
    return engine.draw_variant(spec, 0, name="chapter").params


def test_reloading_the_page_keeps_each_attempts_heatmap(client, item, variant, answer):
    answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    answer(variant, "weights", weights(variant, scaled=False))
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    history = page.split('id="history-weights"')[1].split("</details>")[0]
    assert history.count("Your attention weights") == 1  # the earlier attempt; the latest is the result's
    assert history.count('data-sharpness="flatter"') == 1 and history.count('data-sharpness="sharper"') == 0
    latest = page.split('id="result-weights"')[1]
    assert 'data-sharpness="sharper"' in latest.split("</section>")[0]


def test_an_output_answer_shows_the_weights_it_implies(variant, answer):
    Variant.objects.filter(pk=variant.pk).update(params={**variant.params, "V": V_INDEPENDENT})
    variant.refresh_from_db()
    unscaled = weights(variant, scaled=False)
    html = answer(variant, "output", unscaled @ np.asarray(V_INDEPENDENT))
    implied = [float(value) for value in cells(html, "The weights your output implies")]
    np.testing.assert_allclose(implied, unscaled, atol=3e-4)  # from an output rounded to 4 places
    assert 'data-sharpness="sharper"' in html
    assert "Correct attention weights" not in html


def test_an_output_with_dependent_value_rows_gets_a_note_on_the_answer_not_on_the_method(variant, answer):
    Variant.objects.filter(pk=variant.pk).update(params={**variant.params, "V": [[1, 0, 0, 0]] * 4})
    variant.refresh_from_db()
    html = answer(variant, "output", [0.5, 0.0, 0.0, 0.0])
    assert "The first entry of your output (0.5) is smaller than every entry in the first column of V." in html
    assert "not independent" not in html and "traced back" not in html
    assert "aq-heatmap" not in html


def test_on_the_chapter_variant_output_feedback_agrees_with_the_grade(variant, answer):
    # The chapter's V has dependent rows (rank 3) and Σ w = 1 does not pin the weights either.
    p = variant.params
    right = attention.attention(p["Q"], p["K"], p["V"]).output[p["q"]]
    unscaled = attention.attention(p["Q"], p["K"], p["V"], scale=1.0).output[p["q"]]
    slip = answer(variant, "output", unscaled)
    assert "Likely slip:" in slip and 'data-sharpness="sharper"' in slip
    assert [float(v) for v in cells(slip, "The weights your output implies")] == pytest.approx(
        weights(variant, scaled=False), abs=1e-4)
    solved = answer(variant, "output", right)
    assert "Correct" in solved and "aq-note" not in solved and "traced back" not in solved
    assert [float(v) for v in cells(solved, "The weights your output implies")] == pytest.approx(
        weights(variant, scaled=True), abs=1e-4)


def test_practice_mode_shows_the_heatmap_after_a_wrong_answer(client, item, variant, answer):
    client.post(reverse("practice_start", args=[item.pk]))
    practice = Variant.objects.get(student__username="student1", context__startswith="practice:")
    html = answer(practice, "weights", weights(practice, scaled=False))
    assert 'data-sharpness="sharper"' in html
    assert "Your attention weights" in html
    assert "Correct attention weights" not in html


def test_the_history_shows_a_matrix_answer_typeset_not_as_stored_json(client, item, variant, answer):
    answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    answer(variant, "weights", [0.5, 0.5, 0.5, 0.5])  # the first is history now
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    history = page.split('id="history-weights"')[1].split("</details>")[0]
    entered = history.split('class="aq-history__answer"')[1].split("</p>")[0]
    assert entered.startswith(" data-math>I entered: ")  # KaTeX typesets it
    assert "0.25" in entered and entered.count("$") == 2
    assert '[["' not in history and '"0.2500"' not in history


def test_the_history_names_a_chosen_choice_by_its_text_not_its_key(client, demo, django_user_model, django_capture_on_commit_callbacks):
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug="equal-keys")
    client.force_login(django_user_model.objects.get(username="student1"))
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    right = engine.reference_answers(engine.spec_from_json(variant.exercise_version.spec), variant.params)["equal_pair"]
    first, then = ("02", right) if right != "02" else ("03", "02")  # a wrong one first, so another follows
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "equal_pair"]), {"answer": first})
        client.post(reverse("submit", args=[variant.pk, "equal_pair"]), {"answer": then})
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    history = page.split('id="history-equal_pair"')[1].split("</details>")[0]
    assert f"I entered: tokens {first[0]} and {first[1]}</p>" in history
    assert f"I entered: {first}" not in history and f"<code>{first}</code>" not in history


def test_the_reference_weights_are_computed_only_once_an_attempt_is_graded(variant, answer):
    from grading.models import SubmissionStatus
    from grading.results import weights_reference

    assert weights_reference(variant=variant, part_key="weights") is None  # a first visit: nothing to draw
    Submission.objects.create(
        variant=variant, student=variant.student, part="weights", attempt=1,
        raw_answer="[0.25, 0.25, 0.25, 0.25]", status=SubmissionStatus.QUEUED,
    )
    assert weights_reference(variant=variant, part_key="weights") is None  # queued: no heatmap yet
    Submission.objects.filter(variant=variant).delete()
    answer(variant, "weights", [0.25, 0.25, 0.25, 0.25])
    reference = weights_reference(variant=variant, part_key="weights")
    assert [f"{w:.4f}" for w in reference.weights[0]] == [f"{w:.4f}" for w in weights(variant, scaled=True)]
    assert reference.row_labels == [f"query {variant.params['q']}"] and reference.reveal is False


def test_while_correctness_is_hidden_an_outputs_heatmap_tells_nothing_the_grade_would(variant, answer):
    # The chapter's V: the weights behind an output are not unique. Shown, a right answer
    # gets the correct weights and an undiagnosed wrong one a note; hidden, neither does.
    import dataclasses

    from grading.results import heatmap_for, weights_reference

    p = variant.params
    right = attention.attention(p["Q"], p["K"], p["V"]).output[p["q"]]
    answer(variant, "output", [0.0, 0.0, 0.0, 9.0])
    answer(variant, "output", right)
    wrong, solved = Submission.objects.filter(variant=variant, part="output").order_by("attempt")
    assert (wrong.correct, solved.correct) == (False, True)
    reference = weights_reference(variant=variant, part_key="output")
    assert heatmap_for(solved, reference=reference)["student_title"] == "The weights your output implies"
    assert "unavailable" in heatmap_for(wrong, reference=reference)
    hidden = dataclasses.replace(reference, correctness_shown=False, misconception_shown=False)
    assert heatmap_for(solved, reference=hidden) is None
    assert heatmap_for(wrong, reference=hidden) is None


# A value matrix whose inverse has no zero: one wrong entry of an output moves every weight
# it implies (w = o V⁻¹; a change δ in entry j adds δ · row j of V⁻¹ to w).
V_DENSE = [[2.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 2.0, 1.0], [1.0, 1.0, 0.0, 2.0]]


def result_text(html: str) -> str:
    """The latest result as a student reads it: tags dropped, spaces collapsed, history cut."""
    result = html.split('id="history-wrap-')[0]
    result = re.sub(r'<span class="aq-visually-hidden">[^<]*</span>', "", result)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", result)).strip()


def weights_hints(html: str) -> list[str]:
    """The sentences below the latest result's heatmap, as a student reads them."""
    hints = html.split('id="history-wrap-')[0].split('<ul class="aq-weights-hints">')[1].split("</ul>")[0]
    hints = re.sub(r'<span class="aq-visually-hidden">[^<]*</span>', "", hints)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", item)).strip() for item in re.findall(r"<li[^>]*>(.*?)</li>", hints, re.S)]


IMPLIED_OFF = "The weights your output implies differ from the correct ones where marked ✗."
ONE_ENTRY_MOVES_ALL = (
    " Each of them is worked out from your whole output, so even one wrong entry of the output can move all of them."
)
NOT_YET_SHOWN = "The correct weights are shown here once you solve the part or the solution is released."


@pytest.mark.parametrize(
    "change, grade, hints",
    [
        # One entry off by 0.1: every implied weight moves ([0.4499, 0.1175, 0.2475, 0.1975]),
        # they still add up to 1 within rounding, and their spread is not read as a scaling slip.
        ({0: 0.1}, "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the highlighted cells).",
         [IMPLIED_OFF + ONE_ENTRY_MOVES_ALL, NOT_YET_SHOWN]),
        # The tester's case: one entry off, and the weights it implies add up to more than 1.
        ({0: 0.5}, "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the highlighted cells).",
         [IMPLIED_OFF + ONE_ENTRY_MOVES_ALL,
          "The weights your output implies add up to 1.0625, but softmax weights always add up to 1: "
          "no softmax weights give your output.",
          NOT_YET_SHOWN]),
        # Two entries off, the implied weights still adding up to 1 but one of them negative
        # ([-0.2125, 0.4425, 0.235, 0.535]).
        ({0: -0.9, 2: 0.3}, "Not quite: 2 of the 4 entries are outside the accepted tolerance (see the highlighted cells).",
         [IMPLIED_OFF + ONE_ENTRY_MOVES_ALL,
          "Some of the weights your output implies are below 0 or above 1, but softmax weights always lie "
          "between 0 and 1: no softmax weights give your output.",
          NOT_YET_SHOWN]),
    ],
)
def test_an_undiagnosed_wrong_output_speaks_of_the_weights_it_implies(variant, answer, change, grade, hints):
    Variant.objects.filter(pk=variant.pk).update(params={**variant.params, "V": V_DENSE})
    variant.refresh_from_db()
    p = variant.params
    output = attention.attention(p["Q"], p["K"], V_DENSE).output[p["q"]].round(4)
    for entry, delta in change.items():
        output[entry] += delta
    html = answer(variant, "output", output)
    text = result_text(html)
    assert grade in text and "Likely slip" not in text
    assert weights_hints(html) == hints
    assert "Your attention weights" not in text and "yours add up" not in text and "weights are off" not in text


def test_a_diagnosed_output_shows_the_slips_weights_and_their_spread(variant, answer):
    Variant.objects.filter(pk=variant.pk).update(params={**variant.params, "V": V_DENSE})
    variant.refresh_from_db()
    p = variant.params
    unscaled = attention.attention(p["Q"], p["K"], V_DENSE, scale=1.0).output[p["q"]].round(4)
    html = answer(variant, "output", unscaled)
    assert "Not quite: 4 of the 4 entries are outside the accepted tolerance" in result_text(html)
    assert "Likely slip:" in html
    assert weights_hints(html) == [
        IMPLIED_OFF,  # every entry is off too: nothing to explain
        "The weights your output implies are sharper than expected: too much of the weight goes to the "
        "top-scoring keys (their entropy is lower than it should be). Unscaled scores give exactly this.",
        NOT_YET_SHOWN,
    ]


def test_entered_weights_outside_zero_and_one_are_named_not_their_sum(variant, answer):
    assert weights_hints(answer(variant, "weights", [1.2, -0.2, 0.0, 0.0])) == [
        "4 of 4 weights are off (marked ✗).",
        "Softmax weights always lie between 0 and 1; some of yours do not.",
        NOT_YET_SHOWN,
    ]


@pytest.mark.parametrize("V, drawn", [
    # An invertible V: the weights [1, 2, 3, 4] implies (w V = o), drawn whatever the grade.
    (V_DENSE, [-1.0, 1.0, 1.0, 2.0]),
    # The chapter's V (dependent rows): no weights are unique, so only a note on the answer.
    (None, None),
])
def test_a_wrong_output_graded_right_by_a_person_still_shows_the_weights_it_implies(
    client, variant, answer, V, drawn,
):
    """Staff set a wrong output answer to 100 %: the verdict says "Correct" (a person
    decided), but the table titled "The weights your output implies" is read from the
    answer, never the correct weights."""
    from django.contrib.auth import get_user_model

    from grading.results import heatmap_for, weights_reference
    from instructor.services import submission_grade_manually

    if V is not None:
        Variant.objects.filter(pk=variant.pk).update(params={**variant.params, "V": V})
        variant.refresh_from_db()
    answer(variant, "output", [1.0, 2.0, 3.0, 4.0])
    submission = Submission.objects.get(variant=variant, part="output")
    assert submission.correct is False
    submission_grade_manually(
        submission=submission, grader=get_user_model().objects.get(username="instructor"), score=1.0,
    )
    submission.refresh_from_db()
    assert (submission.correct, submission.score) == (True, 1.0)
    heatmap = heatmap_for(submission, reference=weights_reference(variant=variant, part_key="output"))
    html = client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Correct" in result_text(html)
    if drawn is None:
        assert set(heatmap) == {"unavailable"}
        assert "aq-heatmap" not in html
        return
    assert heatmap["student"] == [drawn]
    assert heatmap["off"] == [[True, True, True, True]]
    figure = html.split('<caption class="aq-heatmap__title">The weights your output implies</caption>')[1].split("</figure>")[0]
    assert re.findall(r'<td class="aq-heatmap__cell[^"]*">(-?[0-9.]+)', figure) == ["-1.0000", "1.0000", "1.0000", "2.0000"]
    assert "The weights your output implies add up to 3.0" in html
