"""The same answer as a part's latest one that counts is refused (``unchanged``), stores
nothing and uses no attempt: through the service, the page's form (with and without its
script) and what it costs in queries. The API's side: api/tests/test_submit_unchanged.py."""

from __future__ import annotations

from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from exercises.services import variant_create_practice
from grading import services, tasks
from grading.models import Submission, SubmissionStatus
from grading.services import answer_key

from .test_query_counts import queries
from .test_services import as_text, reference

GRADED = SubmissionStatus.GRADED
COULD_NOT_GRADE = SubmissionStatus.COULD_NOT_GRADE
KEY = "answer-0001-first"


def wrong(variant, offset=0.1) -> str:
    """A wrong answer to the worked example's weights as text: "[0.xxxx, ...]"."""
    return as_text(reference(variant, "weights") + offset)


def wrong_grid(variant, offset=0.1) -> list[list[str]]:
    """The same wrong answer as the page's grid posts it: one row of four cells."""
    return [[f"{value:.4f}" for value in reference(variant, "weights") + offset]]


def stored(variant, student, history):
    """Earlier answers to the weights part, as (raw answer, status), attempts 1, 2, ..."""
    for attempt, (raw_answer, status) in enumerate(history, start=1):
        Submission.objects.create(variant=variant, student=student, part="weights", raw_answer=raw_answer,
                                  attempt=attempt, status=status, correct=False if status == GRADED else None)


def outcome(variant, student, raw_answer, client_key=""):
    """The new answer's attempt number, or the refusal's code."""
    try:
        return services.submission_create(
            variant=variant, student=student, part="weights", raw_answer=raw_answer, client_key=client_key
        ).attempt
    except services.SubmissionRefused as refused:
        return refused.code


# (case, earlier answers, the new answer, its outcome, answers stored after it); each a
# function of the variant, so the answers are the variant's own numbers.
CASES = [
    ("identical", lambda v: [(wrong(v), GRADED)], wrong, "unchanged", 1),
    ("another answer", lambda v: [(wrong(v), GRADED)], lambda v: wrong(v, 0.2), 2, 2),
    ("spaces around it", lambda v: [(wrong(v), GRADED)], lambda v: f"  {wrong(v)}\n", "unchanged", 1),
    ("runs of spaces inside (the page's rule)", lambda v: [(wrong(v), GRADED)],
     lambda v: wrong(v).replace(", ", ",   "), "unchanged", 1),
    ("a trailing zero more: other text", lambda v: [(wrong(v), GRADED)],
     lambda v: wrong(v).replace("]", "0]"), 2, 2),
    ("still queued", lambda v: [(wrong(v), SubmissionStatus.QUEUED)], wrong, "unchanged", 1),
    ("being graded", lambda v: [(wrong(v), SubmissionStatus.GRADING)], wrong, "unchanged", 1),
    ("waiting for a person", lambda v: [(wrong(v), SubmissionStatus.MANUAL)], wrong, "unchanged", 1),
    ("could not grade: a retry", lambda v: [(wrong(v), COULD_NOT_GRADE)], wrong, 2, 2),
    ("could not grade, between two the same", lambda v: [(wrong(v), GRADED), (wrong(v, 0.2), COULD_NOT_GRADE)],
     wrong, "unchanged", 2),
    ("an older answer again", lambda v: [(wrong(v), GRADED), (wrong(v, 0.2), GRADED)], wrong, 3, 3),
    ("grid: identical", lambda v: [(wrong_grid(v), GRADED)], wrong_grid, "unchanged", 1),
    ("grid: spaces around cells", lambda v: [(wrong_grid(v), GRADED)],
     lambda v: [[f" {cell}\t" for cell in wrong_grid(v)[0]]], "unchanged", 1),
    ("grid: one cell changed", lambda v: [(wrong_grid(v), GRADED)],
     lambda v: [wrong_grid(v)[0][:3] + [wrong_grid(v, 0.2)[0][3]]], 2, 2),
    ("grid, then the same numbers as text", lambda v: [(wrong_grid(v), GRADED)], wrong, 2, 2),
]


@pytest.mark.parametrize(("history", "answer", "expected", "count"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_same_answer_as_the_latest_that_counts_is_refused(variant, student, history, answer, expected, count):
    stored(variant, student, history(variant))
    assert outcome(variant, student, answer(variant)) == expected
    assert Submission.objects.filter(variant=variant, part="weights").count() == count


def test_the_refusal_says_what_happened_and_what_to_do(variant, student):
    stored(variant, student, [(wrong(variant), GRADED)])
    with pytest.raises(services.SubmissionRefused) as refused:
        services.submission_create(variant=variant, student=student, part="weights", raw_answer=wrong(variant))
    assert (refused.value.code, refused.value.message, refused.value.retry_after) == (
        "unchanged",
        "This is the answer you sent last on this part; it was not stored again. Change it to try again.",
        None,
    )


def test_a_graded_answer_sent_again_is_refused_then_a_new_one_counts(
    variant, student, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = services.submission_create(variant=variant, student=student, part="weights", raw_answer=wrong(variant))
    first.refresh_from_db()
    assert (first.status, first.correct) == (GRADED, False)
    assert outcome(variant, student, wrong(variant)) == "unchanged"
    assert outcome(variant, student, as_text(reference(variant, "weights"))) == 2
    assert list(Submission.objects.order_by("attempt").values_list("attempt", "raw_answer")) == [
        (1, wrong(variant)), (2, as_text(reference(variant, "weights"))),
    ]


def test_a_retry_under_its_key_is_answered_with_the_stored_answer_first(variant, student):
    first = services.submission_create(variant=variant, student=student, part="weights",
                                       raw_answer=wrong(variant), client_key=KEY)
    again = services.submission_create(variant=variant, student=student, part="weights",
                                       raw_answer=wrong(variant), client_key=KEY)
    assert (again.pk, getattr(again, "replayed", False)) == (first.pk, True)
    assert outcome(variant, student, wrong(variant), client_key="answer-0002-new") == "unchanged"
    assert outcome(variant, student, wrong(variant)) == "unchanged"  # without a key too
    assert Submission.objects.count() == 1


def test_a_retry_of_an_older_answer_under_its_key_is_still_answered(variant, student):
    first = services.submission_create(variant=variant, student=student, part="weights",
                                       raw_answer=wrong(variant), client_key=KEY)
    services.submission_create(variant=variant, student=student, part="weights",
                               raw_answer=wrong(variant, 0.2), client_key="answer-0002-new")
    again = services.submission_create(variant=variant, student=student, part="weights",
                                       raw_answer=wrong(variant), client_key=KEY)
    assert (again.pk, again.attempt, getattr(again, "replayed", False)) == (first.pk, 1, True)
    assert Submission.objects.count() == 2


def test_a_key_with_answer_changed_only_in_spaces_is_still_a_reused_key(variant, student):
    services.submission_create(variant=variant, student=student, part="weights",
                               raw_answer=wrong(variant), client_key=KEY)
    assert outcome(variant, student, f" {wrong(variant)} ", client_key=KEY) == "key_reused"
    assert Submission.objects.count() == 1


def test_practice_answers_follow_the_same_rule(variant, student):
    practice = variant_create_practice(item=variant.assignment_item, student=student, named=None)
    assert outcome(practice, student, wrong(practice)) == 1
    assert outcome(practice, student, f"{wrong(practice)}  ") == "unchanged"
    assert outcome(practice, student, wrong(practice, 0.2)) == 2
    assert Submission.objects.filter(variant=practice).count() == 2


@pytest.mark.parametrize(("setup", "expected"), [
    ("one attempt", "no_attempts"),
    ("solved", "solved"),
    ("closed", "closed"),
])
def test_the_other_refusals_are_said_first(variant, student, setup, expected):
    assignment = variant.assignment_item.assignment
    answer = as_text(reference(variant, "weights")) if setup == "solved" else wrong(variant)
    Submission.objects.create(variant=variant, student=student, part="weights", raw_answer=answer,
                              attempt=1, status=GRADED, correct=setup == "solved")
    if setup == "one attempt":
        assignment.attempts_per_part = 1
    if setup == "closed":
        assignment.closes_at = timezone.now()
    assignment.save()
    assert outcome(variant, student, answer) == expected


@pytest.mark.parametrize(("first", "second", "same"), [
    ("1.0", "1.0", True),
    ("1.0", " 1.0\t", True),
    ("1.0", "1.00", False),  # other text: the page sends it, so does the server take it
    ("1.0", "1. 0", False),
    ("a  +  b", "a + b", True),  # runs of spaces are one, as on the page
    ("x = 1\n\n y = 2 \r\n", "x = 1\ny = 2", True),  # blank lines and \r\n
    ("x = 1\ny = 2", "x = 1 y = 2", False),  # a line break is not a space
    ("1\u00a0+\u20092", "1 + 2", True),  # JavaScript's white space (trim, \s), no-break included
    ("1\ufeff", "1", True),
    ("1\x1c", "1", False),  # Python's str.strip() removes it; JavaScript's trim() does not
    ("k", ["k"], False),  # a text is not a list of one choice
    (["a", " b "], ["a", "b"], True),  # a multiple choice, each trimmed
    (["a", "b"], ["b", "a"], False),  # the page keeps the order
    ([["1", " 2"], ["3", "4 "]], [["1", "2"], ["3", "4"]], True),
    ([["1", "2"]], [["1", "2", ""]], False),  # the grid's shape counts
    ([["1", None]], [["1", ""]], True),  # an empty cell either way
])
def test_what_counts_as_the_same_answer(first, second, same):
    assert (answer_key(first) == answer_key(second)) is same


@pytest.mark.parametrize("empty", ["", "  \n ", [["", " "]], [], None])
def test_an_answer_with_nothing_in_it_is_never_the_same(empty):
    assert answer_key(empty) is None


# ---------------------------------------------------------------- the page's form


@pytest.fixture
def logged_in(client, student):
    client.force_login(student)
    return client


@pytest.fixture
def queued(settings):
    """Celery mode with the broker call stubbed: the answers stay queued, nothing grades."""
    settings.GRADING_MODE = "celery"
    settings.GRADING_LONG_POLL_SECONDS = 0
    with mock.patch.object(tasks.grade_submission, "apply_async"):
        yield


def post(client, variant, data, **headers):
    return client.post(reverse("submit", args=[variant.pk, "weights"]), data, **headers)


def cells(grid) -> dict:
    return {f"cell-{r}-{c}": value for r, row in enumerate(grid) for c, value in enumerate(row)}


@pytest.mark.parametrize(("first", "second", "status", "count"), [
    (lambda v: {"answer": wrong(v)}, lambda v: {"answer": wrong(v)}, 422, 1),
    (lambda v: {"answer": wrong(v)}, lambda v: {"answer": f"  {wrong(v)}  "}, 422, 1),
    (lambda v: {"answer": wrong(v)}, lambda v: {"answer": wrong(v, 0.2)}, 200, 2),
    (lambda v: cells(wrong_grid(v)), lambda v: {k: f" {x} " for k, x in cells(wrong_grid(v)).items()}, 422, 1),
    (lambda v: cells(wrong_grid(v)), lambda v: cells(wrong_grid(v, 0.2)), 200, 2),
], ids=["identical", "spaces around", "another answer", "grid: spaces around cells", "grid: another answer"])
def test_the_page_answers_a_fragment_with_the_refusal(logged_in, variant, queued, first, second, status, count):
    assert post(logged_in, variant, first(variant), HTTP_HX_REQUEST="true").status_code == 200
    response = post(logged_in, variant, second(variant), HTTP_HX_REQUEST="true")
    assert response.status_code == status
    assert Submission.objects.filter(variant=variant, part="weights").count() == count
    said = "This is the answer you sent last on this part; it was not stored again. Change it to try again."
    assert (said in response.content.decode()) is (status == 422)


def test_without_the_pages_script_the_refusal_is_said_after_the_redirect(logged_in, variant, queued):
    post(logged_in, variant, {"answer": wrong(variant)})
    response = post(logged_in, variant, {"answer": wrong(variant)}, follow=True)
    assert response.redirect_chain[-1][1] == 302
    assert "This is the answer you sent last on this part; it was not stored again." in response.content.decode()
    assert Submission.objects.count() == 1


def test_the_pages_retry_under_its_key_gets_the_stored_answer(logged_in, variant, queued):
    pages = [post(logged_in, variant, {"answer": wrong(variant), "submission_key": KEY}, HTTP_HX_REQUEST="true")
             for _ in range(2)]
    answer = Submission.objects.get()
    assert [page.status_code for page in pages] == [200, 200]
    assert all(f'hx-get="/grading/submissions/{answer.pk}/?wait=1"' in page.content.decode() for page in pages)


def test_the_first_answer_costs_no_query_more_and_a_later_one_one(logged_in, variant, queued,
                                                                  django_capture_on_commit_callbacks):
    # the session's user, the access-checked variant, the row lock, the attempt count, the insert
    with queries(5), django_capture_on_commit_callbacks(execute=True):
        assert post(logged_in, variant, {"answer": wrong(variant)}, HTTP_HX_REQUEST="true").status_code == 200
    # ... the same, refused: the latest answer that counts read instead of the insert
    with queries(5):
        assert post(logged_in, variant, {"answer": wrong(variant)}, HTTP_HX_REQUEST="true").status_code == 422
    # ... another answer: that read, and the insert
    with queries(6), django_capture_on_commit_callbacks(execute=True):
        assert post(logged_in, variant, {"answer": wrong(variant, 0.2)}, HTTP_HX_REQUEST="true").status_code == 200
    assert Submission.objects.count() == 2
