"""Two graders with the same answer open: the one who saves second is told who graded it
meanwhile and with what, and replaces that grade only by saving again, never silently."""

import html

import pytest
from django.test import Client
from django.urls import reverse

from authoring.tests.factories import PASSWORD
from grading.models import SubmissionStatus
from instructor import services_rubrics
from instructor.models import ManualGrade, Rubric
from instructor.services import InstructorRefused
from instructor.tests.test_rubric_grading import answer_url, essays, question_url  # noqa: F401 (fixture)


def _signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _seen(page: str) -> str:
    """The grade the answer's page was shown with (its hidden field's value)."""
    marker = 'name="grade_seen" value="'
    assert marker in page
    return page.split(marker, 1)[1].split('"', 1)[0]


def test_the_second_grader_of_an_answer_is_told_and_overwrites_nothing(people, essays):
    item, first, second = essays["item"], essays["submissions"][0], essays["submissions"][1]
    ines, tariq = _signed_in("ines"), _signed_in("tariq")
    ines.get(question_url(item))
    big, small = Rubric.objects.get().items.all()
    # Both open the same waiting answer.
    seen_by_ines = _seen(ines.get(answer_url(item, first)).content.decode())
    seen_by_tariq = _seen(tariq.get(answer_url(item, first)).content.decode())
    assert seen_by_ines == seen_by_tariq == "0"

    saved = ines.post(answer_url(item, first), {"items": [str(big.pk), str(small.pk)], "comment": "Both.",
                                                "grade_seen": seen_by_ines})
    assert saved.status_code == 302 and saved["Location"] == answer_url(item, second)

    late = tariq.post(answer_url(item, first), {"items": [str(small.pk)], "comment": "Only one.",
                                                "grade_seen": seen_by_tariq})
    assert late.status_code == 409
    page = late.content.decode()
    assert "ines graded this answer (100%) after you opened it" in page
    assert "What you entered is below: save again to replace that grade." in page
    # The late grader's ticks and comment are put back, and the form now names ines's grade.
    assert f'value="{small.pk}" checked' in page and f'value="{big.pk}" checked' not in page
    assert "Only one." in page
    newest = ManualGrade.objects.get(submission=first)
    assert _seen(page) == str(newest.pk)
    first.refresh_from_db()
    assert (first.status, first.score, first.feedback["grader_comment"]) == (SubmissionStatus.GRADED, 1.0, "Both.")

    # Saving again, having seen ines's grade, replaces it on purpose.
    again = tariq.post(answer_url(item, first), {"items": [str(small.pk)], "comment": "Only one.",
                                                 "grade_seen": _seen(page)})
    assert again.status_code == 302
    first.refresh_from_db()
    assert (first.score, first.feedback["grader_comment"]) == (pytest.approx(1 / 3), "Only one.")
    assert ManualGrade.objects.filter(submission=first).count() == 2


def test_a_form_without_the_seen_grade_grades_as_before(people, essays):
    """Older pages still open (and the bulk apply) are not refused."""
    item, first = essays["item"], essays["submissions"][0]
    ines = _signed_in("ines")
    ines.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    for _ in range(2):
        assert ines.post(answer_url(item, first), {"items": [str(big.pk)]}).status_code == 302
    assert ManualGrade.objects.filter(submission=first).count() == 2


@pytest.mark.parametrize("seen", ["abc", "-1", "99999999999999999999999"])
def test_a_garbled_seen_grade_is_a_stale_view_not_a_500(people, essays, seen):
    item, first = essays["item"], essays["submissions"][0]
    ines = _signed_in("ines")
    ines.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    response = ines.post(answer_url(item, first), {"items": [str(big.pk)], "grade_seen": seen})
    assert response.status_code == 409
    assert "This answer's page is out of date: save again to grade it." in html.unescape(response.content.decode())
    assert not ManualGrade.objects.filter(submission=first).exists()


def test_the_service_refuses_a_grade_made_over_one_it_did_not_see(people, essays):
    item, first = essays["item"], essays["submissions"][0]
    rubric = services_rubrics.rubric_for_part(course=people.course, item=item, part="why", seed_criteria=[("a", 2.0), ("b", 1.0)])
    big, _small = rubric.items.all()
    services_rubrics.submission_grade_with_rubric(
        submission=first, rubric=rubric, grader=people.instructor, item_ids=[big.pk], grade_seen=None
    )
    with pytest.raises(InstructorRefused):
        services_rubrics.submission_grade_with_rubric(
            submission=first, rubric=rubric, grader=people.ta, item_ids=[], grade_seen=None
        )
    assert ManualGrade.objects.filter(submission=first).count() == 1


def test_the_manual_grade_page_tells_the_second_grader_too(people):
    """The one-answer page that grades by the author's criteria (no course rubric) keeps the
    same rule: a save over a grade given after the page was shown is refused, and replaces
    it only when made again."""
    from authoring.tests.factories import FREE_TEXT_YAML, assignment_create, published_version, submission_add, variant_for

    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    variant = variant_for(assignment.items.get(), people.student, params={"d": 64})
    essay = submission_add(variant, "why", "The variance grows with d.", awarded=None, status=SubmissionStatus.MANUAL)
    url = reverse("instructor:manual_grade", args=["attn", essay.pk])
    ines, tariq = _signed_in("ines"), _signed_in("tariq")
    seen_by_ines, seen_by_tariq = _seen(ines.get(url).content.decode()), _seen(tariq.get(url).content.decode())
    assert seen_by_ines == seen_by_tariq == "0"

    assert ines.post(url, {"score": "1", "comment": "Full marks.", "grade_seen": seen_by_ines}).status_code == 302
    late = tariq.post(url, {"score": "0.25", "comment": "A quarter.", "grade_seen": seen_by_tariq})
    assert late.status_code == 409
    page = html.unescape(late.content.decode())
    assert "ines graded this answer (100%) after you opened it. What you entered is below: save again" in page
    assert "A quarter." in page and 'value="0.25"' in page
    essay.refresh_from_db()
    assert (essay.score, essay.feedback["grader_comment"]) == (1.0, "Full marks.")

    again = tariq.post(url, {"score": "0.25", "comment": "A quarter.", "grade_seen": _seen(late.content.decode())})
    assert again.status_code == 302
    essay.refresh_from_db()
    assert (essay.score, essay.feedback["grader_comment"]) == (0.25, "A quarter.")
    assert ManualGrade.objects.filter(submission=essay).count() == 2
