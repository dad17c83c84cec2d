"""Rubric grading by question: a course rubric per part (seeded from the author's
criteria), grading across students with "next waiting", anonymous mode, one item applied
to many answers, regrade requests with a reply, and partial credit reaching mastery."""

import re

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, user_create, variant_for,
)
from courses.models import Enrolment, Role
from grading.models import SubmissionStatus
from instructor import services_rubrics
from instructor.models import RegradeRequest, Rubric
from instructor.services import InstructorRefused
from mastery.models import Observation, SkillMastery

ESSAY_WITH_SKILL = FREE_TEXT_YAML.replace("version: 1\n", "version: 1\nskills: [scaling]\n", 1)


@pytest.fixture
def essays(people):
    """Five students (sam, sue, ann, bob, cat) answered the free-text part 'why', in that order."""
    version = published_version(source=ESSAY_WITH_SKILL)
    assignment = assignment_create(people.course, [version], slug="essay")
    item = assignment.items.get()
    students = [people.student, people.student2]
    for username in ("ann", "bob", "cat"):
        user = user_create(username)
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
        students.append(user)
    submissions = []
    for seed, student in enumerate(students, start=1):
        variant = variant_for(item, student, params={"d": 64}, seed=seed)
        submissions.append(
            submission_add(variant, "why", f"answer of {student.username}", awarded=None, status=SubmissionStatus.MANUAL)
        )
    return {"item": item, "students": students, "submissions": submissions}


def question_url(item, *rest):
    return reverse("instructor:grading_question", args=["attn", item.pk, "why"]) + "".join(rest)


def answer_url(item, submission):
    return reverse("instructor:grading_answer", args=["attn", item.pk, "why", submission.pk])


def test_the_question_list_counts_the_waiting_answers_by_part_label(client, people, essays):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(reverse("instructor:grading", args=["attn"])).content.decode()
    assert "Essay · Why scale by the square root of d_k (a)" in page
    assert re.search(r"<td class=\"num\">5</td><td class=\"num\">5</td>", page)


def test_a_new_rubric_starts_from_the_authors_criteria_and_is_shared_by_the_course(client, people, essays):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(question_url(essays["item"])).content.decode()
    rubric = Rubric.objects.get()
    assert [(i.text, i.points) for i in rubric.items.all()] == [
        ("mentions that the dot product's variance grows with d_k", 2.0),
        ("mentions that large scores saturate the softmax", 1.0),
    ]
    assert "5 waiting" in page and "(+2)" in page
    client.get(question_url(essays["item"]))
    assert Rubric.objects.count() == 1


def test_grading_one_answer_goes_to_the_next_waiting_one(client, people, essays):
    client.login(username="tariq", password=PASSWORD)
    item, first, second = essays["item"], essays["submissions"][0], essays["submissions"][1]
    client.get(question_url(item))
    rubric = Rubric.objects.get()
    big, small = rubric.items.all()
    response = client.post(answer_url(item, first), {"items": [str(big.pk)], "comment": "Say why it saturates."})
    assert response.status_code == 302 and response["Location"] == answer_url(item, second)
    first.refresh_from_db()
    assert (first.status, first.score, first.feedback["grader_comment"]) == (
        SubmissionStatus.GRADED, pytest.approx(2 / 3), "Say why it saturates."
    )
    assert list(first.manual_grades.get().rubric_items.all()) == [big]
    # The answer page shows what was ticked, and its shortcuts come from the static script.
    page = client.get(answer_url(item, first)).content.decode()
    assert f'value="{big.pk}" checked' in page and 'data-shortcut="1"' in page
    assert "attnquiz/grading.js" in page and "<script>" not in page


def test_rubric_items_of_another_rubric_are_refused(client, people, essays):
    client.login(username="ines", password=PASSWORD)
    client.get(question_url(essays["item"]))
    response = client.post(answer_url(essays["item"], essays["submissions"][0]), {"items": ["999999"]})
    assert response.status_code == 422 and "this part&#x27;s rubric only" in response.content.decode()
    essays["submissions"][0].refresh_from_db()
    assert essays["submissions"][0].status == SubmissionStatus.MANUAL


def test_anonymous_mode_hides_every_name(client, people, essays):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(question_url(essays["item"], "?anonymous=1")).content.decode()
    assert "Answer 1" in page and "Answer 5" in page
    for name in ("Sam Stone", "Sue Shaw", ">ann<", ">bob<", ">cat<"):
        assert name not in page
    # It stays on for the next page, until switched off.
    answer = client.get(answer_url(essays["item"], essays["submissions"][3])).content.decode()
    assert "answer 4" in answer and "bob" not in answer.split("<h2>Answer</h2>")[0]
    assert "Sam Stone" in client.get(question_url(essays["item"], "?anonymous=0")).content.decode()


def test_one_item_applied_to_many_answers(client, people, essays):
    client.login(username="ines", password=PASSWORD)
    item, submissions = essays["item"], essays["submissions"]
    client.get(question_url(item))
    big, small = Rubric.objects.get().items.all()
    client.post(answer_url(item, submissions[0]), {"items": [str(big.pk)]})
    response = client.post(
        reverse("instructor:grading_apply", args=["attn", item.pk, "why"]),
        {"item": str(small.pk), "answers": [str(s.pk) for s in submissions[:3]]},
    )
    assert response.status_code == 302
    scores = []
    for submission in submissions:
        submission.refresh_from_db()
        scores.append(None if submission.score is None else round(submission.score, 4))
    assert scores == [1.0, 0.3333, 0.3333, None, None]


def test_a_students_regrade_request_and_the_reply(client, people, essays):
    item, first = essays["item"], essays["submissions"][0]
    rubric = services_rubrics.rubric_for_part(course=people.course, item=item, part="why", seed_criteria=[("x", 1)])
    services_rubrics.submission_grade_with_rubric(submission=first, rubric=rubric, grader=people.ta, item_ids=[])
    client.login(username="sam", password=PASSWORD)
    mine = client.get(reverse("grades:mine")).content.decode()
    assert "Ask for another look" in mine
    url = reverse("grades:regrade_request", args=[first.pk])
    assert client.post(url, {"message": "I did say it saturates."}).status_code == 302
    client.post(url, {"message": "Again"})
    assert RegradeRequest.objects.count() == 1  # one open request per answer
    other = essays["submissions"][1]
    assert client.post(reverse("grades:regrade_request", args=[other.pk]), {"message": "x"}).status_code == 404
    assert client.get(reverse("instructor:regrade_requests", args=["attn"])).status_code == 403
    client.login(username="tariq", password=PASSWORD)
    listing = client.get(reverse("instructor:regrade_requests", args=["attn"])).content.decode()
    assert "I did say it saturates." in listing
    request = RegradeRequest.objects.get()
    services_rubrics.submission_grade_with_rubric(
        submission=first, rubric=rubric, grader=people.ta, item_ids=[rubric.items.get().pk]
    )
    client.post(reverse("instructor:regrade_request_reply", args=["attn", request.pk]), {"reply": "You did: full marks."})
    request.refresh_from_db()
    assert (request.status, request.score_before, request.score_after) == ("answered", 0.0, 1.0)
    client.login(username="sam", password=PASSWORD)
    assert "You did: full marks." in client.get(reverse("grades:mine")).content.decode()
    with pytest.raises(InstructorRefused, match="already answered"):
        services_rubrics.regrade_request_reply(request=request, replier=people.ta, reply="again")


@pytest.mark.parametrize(
    "role, status", [("anonymous", 302), ("student", 403), ("outsider", 404), ("ta", 200), ("instructor", 200)]
)
def test_grading_pages_are_for_the_course_staff(client, people, essays, role, status):
    from authoring.tests.factories import request_as

    for url in (reverse("instructor:grading", args=["attn"]), question_url(essays["item"]),
                answer_url(essays["item"], essays["submissions"][0])):
        assert request_as(client, role, "get", url).status_code == status


def test_a_numeric_part_is_not_graded_by_question(client, people, essays):
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:grading_question", args=["attn", essays["item"].pk, "nope"])
    assert client.get(url).status_code == 404


def test_a_partial_manual_grade_raises_mastery(people, essays, django_capture_on_commit_callbacks, settings):
    """0.8 of the part is partial evidence for its skill, not a failure (docs/mastery.md)."""
    settings.GRADING_MODE = "inline"
    item, first = essays["item"], essays["submissions"][0]
    rubric = services_rubrics.rubric_for_part(course=people.course, item=item, part="why")
    for text, points in (("a", 4), ("b", 1)):
        services_rubrics.rubric_item_add(rubric=rubric, text=text, points=points)
    a, _b = rubric.items.all()
    with django_capture_on_commit_callbacks(execute=True):
        services_rubrics.submission_grade_with_rubric(submission=first, rubric=rubric, grader=people.ta, item_ids=[a.pk])
    observation = Observation.objects.get(submission=first)
    assert (observation.skill, observation.correct, observation.credit) == ("scaling", True, pytest.approx(0.8))
    mastery = SkillMastery.objects.get(student=people.student, skill="scaling")
    assert mastery.p_known == pytest.approx(0.697727, abs=1e-6)  # up from the prior 0.3


def test_a_rubric_without_items_says_so_outside_the_numbered_list(client, people, essays):
    client.login(username="tariq", password=PASSWORD)
    client.get(question_url(essays["item"]))
    Rubric.objects.get().items.all().delete()
    page = client.get(question_url(essays["item"])).content.decode()
    assert '<p class="muted" id="rubric-items">No items yet: add some below.</p>' in page
    assert '<ol id="rubric-items">' not in page


@pytest.mark.parametrize("remove, left, message", [
    ("own", ["kept"], "Removed the item."),
    ("12345678", ["kept", "gone"], "No such rubric item."),
    ("abc", ["kept", "gone"], "No such rubric item."),
])
def test_removing_a_rubric_item_from_the_question_page(client, people, essays, remove, left, message):
    """The Remove button posts the item's id: it answered 500 (a list given as the id)."""
    item = essays["item"]
    rubric = services_rubrics.rubric_for_part(
        course=people.course, item=item, part="why", seed_criteria=[("kept", 1), ("gone", 1)]
    )
    value = str(rubric.items.get(text="gone").pk) if remove == "own" else remove
    client.login(username="tariq", password=PASSWORD)
    response = client.post(
        reverse("instructor:grading_rubric", args=["attn", item.pk, "why"]), {"remove": value}, follow=True
    )
    assert response.status_code == 200
    assert sorted(rubric.items.values_list("text", flat=True)) == sorted(left)
    assert message in response.content.decode()
