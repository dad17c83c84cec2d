"""A student reads, with their result for a part graded by a person, the rubric items that
applied with their points, in the rubric's order, once the review policy shows both the
score and the verdict; item text is the grader's and is escaped."""

import html
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from courses.models import ReleaseMoment
from grading.models import SubmissionStatus
from grading.tests.test_query_counts import statements_run
from instructor import services_rubrics

HOSTILE = '<script>alert("x")</script> & <b>bold</b>'


@pytest.fixture
def essay(people):
    """sam answered the free-text part 'why'; the course's rubric of it has four items."""
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"d": 64})
    answer = submission_add(variant, "why", "Because the softmax saturates.", awarded=None, status=SubmissionStatus.MANUAL)
    rubric = services_rubrics.rubric_create(
        course=people.course, item=item, part="why",
        criteria=[("Divides by √d_k", 1.0), ("Says the variance grows with d_k", 2.0), ("Forgot the softmax", -0.5),
                  (HOSTILE, 0.5)],
    )
    return {"assignment": assignment, "item": item, "answer": answer, "rubric": rubric,
            "items": {i.text: i for i in rubric.items.all()}}


def ticked_lines(page: str) -> list[str] | None:
    """The rubric lines of the result as a person reads them; None without the list."""
    block = re.search(r"<div class=\"rubric-ticked\" data-rubric-ticked>(.*?)</div>", page, re.S)
    if block is None:
        return None
    lines = re.findall(r"<li>(.*?)</li>", block[1], re.S)
    return [html.unescape(re.sub(r"<span aria-hidden=\"true\">(.*?)</span>", r"\1", line)).strip() for line in lines]


def grade_by_ta(client, essay, *texts, comment="See the variance argument."):
    client.login(username="tariq", password=PASSWORD)
    url = reverse("instructor:grading_answer", args=["attn", essay["item"].pk, "why", essay["answer"].pk])
    response = client.post(url, {"items": [str(essay["items"][t].pk) for t in texts], "comment": comment})
    assert response.status_code == 302
    client.logout()


def student_pages(client, essay) -> tuple[str, str]:
    """(the exercise page, the part's result fragment) as sam reads them."""
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("exercise", args=[essay["item"].pk])).content.decode()
    result = client.get(reverse("submission", args=[essay["answer"].pk]), HTTP_HX_REQUEST="true").content.decode()
    return page, result


def test_the_student_sees_the_ticked_items_in_the_rubrics_order_with_their_points(client, essay):
    grade_by_ta(client, essay, "Forgot the softmax", "Divides by √d_k")  # ticked out of order
    page, result = student_pages(client, essay)
    expected = ["✓ Divides by √d_k (+1)", "✓ Forgot the softmax (−0.5)"]
    assert ticked_lines(page) == expected
    assert ticked_lines(result) == expected
    assert "See the variance argument." in page and "Rubric items that applied:" in page


def test_a_grade_without_ticked_items_shows_no_list(client, essay):
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answer"], rubric=essay["rubric"], grader=None, item_ids=[], comment="Nothing yet."
    )
    page, result = student_pages(client, essay)
    assert ticked_lines(page) is None and ticked_lines(result) is None
    assert "Nothing yet." in page


def test_item_text_is_escaped(client, essay):
    grade_by_ta(client, essay, HOSTILE)
    page, result = student_pages(client, essay)
    for shown in (page, result):
        assert ticked_lines(shown) == [f"✓ {HOSTILE} (+0.5)"]
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in shown
        assert '<script>alert("x")' not in shown and "<b>bold</b>" not in shown


@pytest.mark.parametrize("correctness, score, shown", [
    (ReleaseMoment.DURING, ReleaseMoment.DURING, True),
    (ReleaseMoment.DURING, ReleaseMoment.ON_RELEASE, False),  # the comment shows, the points not yet
    (ReleaseMoment.ON_RELEASE, ReleaseMoment.DURING, False),
    (ReleaseMoment.ON_RELEASE, ReleaseMoment.ON_RELEASE, False),
])
def test_the_items_show_only_when_the_score_and_the_verdict_both_do(client, essay, correctness, score, shown):
    assignment = essay["assignment"]
    assignment.show_correctness, assignment.show_score = correctness, score
    assignment.save()
    grade_by_ta(client, essay, "Divides by √d_k")
    page, result = student_pages(client, essay)
    assert (ticked_lines(page) is not None, ticked_lines(result) is not None) == (shown, shown)
    assert ("Divides by √d_k" in page, "Divides by √d_k" in result) == (shown, shown)


def test_the_items_show_once_the_grades_are_released(client, essay):
    assignment = essay["assignment"]
    assignment.show_correctness = assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.save()
    grade_by_ta(client, essay, "Divides by √d_k", "Says the variance grows with d_k")
    page, _ = student_pages(client, essay)
    assert ticked_lines(page) is None and "Divides by √d_k" not in page
    assignment.grades_released_at = timezone.now() - timedelta(seconds=1)
    assignment.save()
    page, result = student_pages(client, essay)
    assert ticked_lines(page) == ticked_lines(result) == [
        "✓ Divides by √d_k (+1)", "✓ Says the variance grows with d_k (+2)"
    ]


def test_the_staff_see_what_the_student_would_in_the_result(client, essay, people):
    grade_by_ta(client, essay, "Divides by √d_k")
    client.login(username="tariq", password=PASSWORD)
    result = client.get(reverse("submission", args=[essay["answer"].pk]), HTTP_HX_REQUEST="true").content.decode()
    assert ticked_lines(result) == ["✓ Divides by √d_k (+1)"]


def test_the_authors_criteria_ticked_on_the_grade_page_show_too(client, essay):
    essay["rubric"].delete()  # with a course rubric, the grade page grades by that rubric only
    client.login(username="tariq", password=PASSWORD)
    response = client.post(
        reverse("instructor:manual_grade", args=["attn", essay["answer"].pk]), {"criteria": ["1"], "comment": ""}
    )
    assert response.status_code == 302
    page, _ = student_pages(client, essay)
    assert ticked_lines(page) == ["✓ mentions that large scores saturate the softmax (+1)"]


def test_a_regrade_with_other_items_replaces_the_list(client, essay):
    grade_by_ta(client, essay, "Divides by √d_k")
    grade_by_ta(client, essay, "Says the variance grows with d_k", "Forgot the softmax")
    page, _ = student_pages(client, essay)
    assert ticked_lines(page) == ["✓ Says the variance grows with d_k (+2)", "✓ Forgot the softmax (−0.5)"]


def test_the_list_adds_no_query_to_the_students_pages(client, essay):
    """The items are stored with the grade's feedback: the pages read no rubric."""
    client.login(username="sam", password=PASSWORD)
    urls = [reverse("exercise", args=[essay["item"].pk]), reverse("submission", args=[essay["answer"].pk])]
    counts = {}
    for ticked in ([], ["Divides by √d_k", "Forgot the softmax"]):
        services_rubrics.submission_grade_with_rubric(
            submission=essay["answer"], rubric=essay["rubric"], grader=None,
            item_ids=[essay["items"][t].pk for t in ticked],
        )
        for url in urls:
            client.get(url)  # a first visit stores the variant's rendered prompt
            with CaptureQueriesContext(connection) as captured:
                page = client.get(url, HTTP_HX_REQUEST="true").content.decode()
            counts.setdefault(url, []).append((len(statements_run(captured)), ticked_lines(page) is not None))
    for url in urls:
        (without, listed_without), (with_items, listed_with) = counts[url]
        assert (with_items, listed_without, listed_with) == (without, False, True)


def my_grades_card(client, essay) -> str | None:
    """sam's card of the answer on "Answers graded by your instructors"; None when absent."""
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("grades:mine")).content.decode()
    card = re.search(rf'<section class="card" id="graded-{essay["answer"].pk}">(.*?)</section>', page, re.S)
    return None if card is None else card[1]


@pytest.mark.parametrize("correctness, score, score_line, items", [
    (ReleaseMoment.DURING, ReleaseMoment.DURING, "Score 85.7% · “See the variance argument.”",
     ["✓ Divides by √d_k (+1)", "✓ Says the variance grows with d_k (+2)"]),
    # The verdict is out, the score not: the page said "Score 1.00" all the same.
    (ReleaseMoment.DURING, ReleaseMoment.ON_RELEASE,
     "Graded; the score is not shown yet · “See the variance argument.”", None),
])
def test_my_graded_answers_page_follows_the_score_policy(client, essay, correctness, score, score_line, items):
    assignment = essay["assignment"]
    assignment.show_correctness, assignment.show_score = correctness, score
    assignment.save()
    grade_by_ta(client, essay, "Divides by √d_k", "Says the variance grows with d_k")
    card = my_grades_card(client, essay)
    assert re.search(r"<p>(.*?)</p>", card, re.S)[1].replace("&ldquo;", "“") == score_line
    assert ticked_lines(card) == items


def test_my_graded_answers_page_leaves_out_a_withheld_verdict(client, essay):
    assignment = essay["assignment"]
    assignment.show_correctness = assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.save()
    grade_by_ta(client, essay, "Divides by √d_k")
    assert my_grades_card(client, essay) is None


def test_a_grade_without_a_comment_does_not_put_the_score_in_its_message(client, essay):
    """The message shows with the verdict, which may come out before the score: it said
    "Graded by your instructor: 50%." while the policy still hid scores."""
    from instructor import services

    assignment = essay["assignment"]
    assignment.show_correctness, assignment.show_score = ReleaseMoment.DURING, ReleaseMoment.ON_RELEASE
    assignment.save()
    services.submission_grade_manually(submission=essay["answer"], grader=None, score=0.5)
    essay["answer"].refresh_from_db()
    assert essay["answer"].feedback["message"] == "Graded by your instructor."
    page, result = student_pages(client, essay)
    for shown in (page, result):
        assert "Graded by your instructor." in shown and "50%" not in shown
