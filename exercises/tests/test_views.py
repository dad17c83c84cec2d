"""Student pages: who may open what, and the exercise page's form and submit round trip."""

from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from courses.models import AssignmentItem
from exercises import engine
from exercises.models import Variant
from grading.models import Submission

WORKED_EXAMPLE = "attention-weights-one-query"


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )


def login(client, username):
    assert client.login(username=username, password="attention-demo")


def test_pages_need_login(client, item):
    response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_dashboard_lists_the_demo_assignment(client, demo):
    login(client, "student1")
    response = client.get(reverse("dashboard"))
    assert response.status_code == 200
    assert "Scaled dot-product attention" in response.content.decode()


def test_exercise_page_shows_the_students_own_matrices_and_a_grid(client, item, django_user_model):
    login(client, "student1")
    response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    html = response.content.decode()
    assert "\\begin{bmatrix}" in html
    assert 'name="cell-0-3"' in html and 'name="cell-1-0"' not in html
    assert 'aria-label="fourth entry of part (a)"' in html
    assert reverse("submit", args=[variant.pk, "weights"]) in html
    again = client.get(reverse("exercise", args=[item.pk]))
    assert again.status_code == 200
    assert Variant.objects.filter(student__username="student1", assignment_item=item).count() == 1


def test_variants_differ_between_students_but_are_stable(client, item):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    login(client, "student2")
    client.get(reverse("exercise", args=[item.pk]))
    first, second = Variant.objects.filter(assignment_item=item).order_by("student__username")
    assert first.seed != second.seed


def test_htmx_submit_returns_the_graded_fragment(client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    spec = engine.spec_from_json(variant.exercise_version.spec)
    weights = np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)
    cells = {f"cell-0-{c}": f"{value:.4f}" for c, value in enumerate(weights)}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("submit", args=[variant.pk, "weights"]), cells, HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200
    submission = Submission.objects.get(variant=variant, part="weights")
    # Inside the test transaction grading runs at commit, after the fragment was made,
    # so the fragment polls; the poll then shows the grade.
    assert reverse("submission", args=[submission.pk]) in response.content.decode()
    html = client.get(reverse("submission", args=[submission.pk])).content.decode()
    assert "Correct" in html
    assert "Your attention weights" in html  # the heatmap, shown once solved
    assert submission.raw_answer == [[cells[f"cell-0-{c}"] for c in range(4)]]
    assert submission.score == 1.0


def test_format_error_comes_back_at_once_and_costs_nothing(client, item):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    response = client.post(
        reverse("submit", args=[variant.pk, "weights"]),
        {"cell-0-0": "0.1", "cell-0-1": "abc", "cell-0-2": "0.3", "cell-0-3": "0.4"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert "did not use an attempt" in response.content.decode()
    assert Submission.objects.count() == 0


def test_a_student_cannot_submit_to_another_students_variant(client, item):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    login(client, "student2")
    response = client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": "1"})
    assert response.status_code == 404


def test_a_student_cannot_read_another_students_submission(client, item):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": "[0.25, 0.25, 0.25, 0.25]"})
    submission = Submission.objects.get()
    assert client.get(reverse("submission", args=[submission.pk])).status_code == 200
    login(client, "student2")
    assert client.get(reverse("submission", args=[submission.pk])).status_code == 404
    login(client, "instructor")
    assert client.get(reverse("submission", args=[submission.pk])).status_code == 200


def test_preview_reports_parse_errors(client, demo):
    login(client, "student1")
    response = client.post(
        reverse("preview"),
        data='{"type": "symbolic", "answer": "sqrt(d_k", "options": {"symbols": {"d_k": "positive"}}}',
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["latex"] is None
    assert response.json()["error"]
    bad = client.post(reverse("preview"), data="not json", content_type="application/json")
    assert bad.status_code == 400


def test_dashboard_links_staff_to_teaching_and_authoring(client, demo):
    login(client, "instructor")
    html = client.get(reverse("dashboard")).content.decode()
    assert reverse("instructor:course", args=["attention-101"]) in html
    assert reverse("authoring:list", args=["attention-101"]) in html
    login(client, "student1")
    html = client.get(reverse("dashboard")).content.decode()
    assert reverse("instructor:course", args=["attention-101"]) not in html


def test_a_wrong_answer_unlocks_the_first_hint_without_a_reload(client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert "Start by forming" not in page
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("submit", args=[variant.pk, "weights"]),
            {"answer": "[0.25, 0.25, 0.25, 0.25]"},
            HTTP_HX_REQUEST="true",
        )
    submission = Submission.objects.get(variant=variant, part="weights")
    html = client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert 'id="extras-weights" hx-swap-oob="true"' in html
    assert "Start by forming" in html
    assert 'id="attempts-left-weights" data-attempts-left hx-swap-oob="true">4<' in html


def test_history_lists_my_attempts_with_what_i_entered_and_the_feedback(client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": "[0.25, 0.25, 0.25, 0.25]"})
        client.post(
            reverse("submit", args=[variant.pk, "weights"]),
            {"cell-0-0": "0.1", "cell-0-1": "0.2", "cell-0-2": "0.3", "cell-0-3": "0.4"},
        )
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    # The latest attempt is the result block's; the history holds the ones before it.
    history = html.split('id="history-weights"')[1].split("</details>")[0]
    assert "Earlier attempts at this part (1)" in history
    assert history.count('class="aq-history__attempt"') == 1 and 'data-attempt="1"' in history
    # Each answer typeset as the student's preview read it, never the stored JSON.
    assert "I entered: <span class=\"aq-answer-typeset__line\">$\\begin{bmatrix} 0.25 &amp; 0.25 &amp; 0.25 &amp; 0.25 \\end{bmatrix}$</span>" in history
    assert "0.1 &amp; 0.2" not in history
    assert "[[&quot;0.1&quot;" not in history
    result = html.split('id="result-weights"')[1].split("</section>")[0]
    assert "entries are outside the accepted tolerance" in result
    login(client, "student2")
    client.get(reverse("exercise", args=[item.pk]))
    assert "attempts at this part" not in client.get(reverse("exercise", args=[item.pk])).content.decode()


def test_assignment_page_shows_attempts_left_and_exercise_page_the_penalties(client, item):
    assignment = item.assignment
    assignment.penalty_per_extra_attempt = 0.1
    assignment.late_penalty = 0.25
    assignment.save()
    login(client, "student1")
    listing = client.get(
        reverse("assignment", args=[assignment.course.slug, assignment.slug])
    ).content.decode()
    assert "<td>5 per part</td>" in listing
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert "Each attempt after the first costs 10% of the part's score." in page
    # No due date: no answer can be late, so no late penalty is announced.
    assert "Answers after the due date" not in page
    assignment.due_at = timezone.now() + timedelta(days=1)
    assignment.save()
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert "Each attempt after the first costs 10% of the part's score. Answers after the due date lose 25%." in page
    assert reverse("explorations:scaling") in page


def test_a_matrix_part_with_partial_credit_says_so_on_the_page(client, demo):
    login(client, "student1")
    for slug, stated in (("equal-keys", True), (WORKED_EXAMPLE, False)):
        item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)
        html = client.get(reverse("exercise", args=[item.pk])).content.decode()
        assert ("Partial credit: each correct cell earns its share of the marks." in html) is stated, slug


def test_a_right_answer_after_a_wrong_one_shows_its_score_and_what_the_penalty_left_as_percents(
        client, item, django_capture_on_commit_callbacks):
    assignment = item.assignment
    assignment.penalty_per_extra_attempt = 0.1
    assignment.save()
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    spec = engine.spec_from_json(variant.exercise_version.spec)
    weights = engine.reference_answers(spec, variant.params)["weights"]
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": "[0.1, 0.2, 0.3, 0.4]"})
        client.post(reverse("submit", args=[variant.pk, "weights"]),
                    {f"cell-0-{c}": f"{value:.4f}" for c, value in enumerate(weights)})
    wrong, right = Submission.objects.filter(variant=variant, part="weights").order_by("attempt")
    assert (wrong.score, right.score, right.awarded) == (0.0, 1.0, pytest.approx(0.9))
    result = client.get(reverse("submission", args=[right.pk])).content.decode()
    assert "score 100% (90% after penalties), attempt 2" in result
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    history = page.split('id="history-weights"')[1].split("</details>")[0]
    assert "\n        score 0%</p>" in history and "correct</p>" not in history  # the earlier attempt
    assert "score 100% (90% after penalties), attempt 2" in page.split('id="result-weights"')[1]


@pytest.mark.parametrize(("shape", "labels"), [
    ([1, 3], [["first entry of part (b)", "second entry of part (b)", "third entry of part (b)"]]),
    ([2, 2], [["first row, first column of part (b)", "first row, second column of part (b)"],
              ["second row, first column of part (b)", "second row, second column of part (b)"]]),
    ([12, 1], [[f"{word} row, first column of part (b)"] for word in (
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "11th", "12th")]),
])
def test_grid_cells_are_named_by_ordinal_words_not_numbers_a_prompt_could_count_from_0(shape, labels):
    from exercises.selectors import _grid_cells

    assert [[cell.label for cell in row] for row in _grid_cells(shape, part_label="(b)")] == labels


def test_weights_of_1e30_are_graded_and_every_page_showing_them_still_opens(
        client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "weights"]),
                    {f"cell-0-{c}": "1e30" for c in range(4)}, HTTP_HX_REQUEST="true")
    submission = Submission.objects.get(variant=variant, part="weights")
    assert (submission.status, submission.score) == ("graded", 0.0)
    result = client.get(reverse("submission", args=[submission.pk]))
    page = client.get(reverse("exercise", args=[item.pk]))
    assert (result.status_code, page.status_code) == (200, 200)
    assert ">1e+30<" in page.content.decode()


def test_one_attempt_has_no_history_its_result_block_says_it_all(client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": "[0.25, 0.25, 0.25, 0.25]"})
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'id="history-weights"' not in html
    assert html.count("entries are outside the accepted tolerance") == 1


def test_the_page_marks_what_its_script_needs_for_answers_not_sent(client, item, django_capture_on_commit_callbacks):
    """Each part's key for its draft (variant and part), the stored answer on its result
    (to tell an answer already sent), and no closing reason while answers are taken."""
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert f'data-draft-key="{variant.pk}:weights"' in html
    assert f'data-draft-key="{variant.pk}:output"' in html
    assert "data-answer=" not in html  # nothing stored yet
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("submit", args=[variant.pk, "weights"]),
            {"cell-0-0": "0.1", "cell-0-1": "0.2", "cell-0-2": "0.3", "cell-0-3": " 0.4 "},
        )
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    # As stored: the cells trimmed, as JSON (escaped for the attribute).
    assert 'data-answer="[[&quot;0.1&quot;,&quot;0.2&quot;,&quot;0.3&quot;,&quot;0.4&quot;]]"' in html
    assert '<div class="aq-unsent-drafts" id="unsent-drafts" data-unsent-drafts hidden>' in html
    assert "data-unsent-warning" not in html  # no time limit, no clock


def test_once_the_time_is_up_the_page_says_why_it_takes_no_answers(client, item):
    item.assignment.time_limit_minutes = 1
    item.assignment.save()
    login(client, "student1")
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'data-unsent-warning' in html and "data-closed-by" not in html
    assert '<span data-countdown-limit>Time limit: 1 minute.</span>' in html
    assert '(about <span data-countdown-minutes>1 minute</span>; ends at' in html
    Variant.objects.filter(student__username="student1", assignment_item=item).update(
        created_at=timezone.now() - timedelta(minutes=2)
    )
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'data-unsent-drafts data-closed-by="time" hidden' in html
    assert 'class="answer-form"' not in html and "data-unsent-warning" not in html
