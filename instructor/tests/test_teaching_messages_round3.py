"""Messages of the teaching pages that say what to do: a refused grade category names the
field and its range, a refused typed score says what to type (not "no rubric points"),
a graded free-text answer's page leads to changing its grade, and a student whose hand
grades are withheld is not told that nothing was graded."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from courses.models import ReleaseMoment
from grading.models import SubmissionStatus
from instructor import services
from instructor.models import GradeCategory


def messages_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "Homework", "weight": "150", "drop_lowest": "0"},
     "Nothing was saved: the category “Homework” needs a weight between 0 and 100 (percent of the course total)."),
    ({"name": "Homework", "weight": "40", "drop_lowest": "99"},
     "Nothing was saved: the category “Homework” needs a whole number between 0 and 50 of lowest results to drop."),
    ({"name": "", "weight": "-5", "drop_lowest": "x"},
     "Nothing was saved: the category needs a name of at most 100 characters, a weight between 0 and 100 "
     "(percent of the course total) and a whole number between 0 and 50 of lowest results to drop."),
    ({"name": "Homework", "weight": "nan", "drop_lowest": "0"},
     "Nothing was saved: the category “Homework” needs a weight between 0 and 100 (percent of the course total)."),
])
def test_a_refused_category_says_which_field_and_what_it_needs(client, people, fields, message):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("instructor:grade_category_add", args=["attn"]), fields)
    assert response.status_code == 302
    assert messages_of(response) == [message]
    assert GradeCategory.objects.count() == 0


def test_a_refused_category_edit_says_the_same_and_keeps_the_category(client, people):
    client.login(username="ines", password=PASSWORD)
    category = GradeCategory.objects.create(course=people.course, name="Homework", weight=40, drop_lowest=0)
    response = client.post(
        reverse("instructor:grade_category_edit", args=["attn", category.pk]),
        {"name": "Homework", "weight": "40", "drop_lowest": "51"},
    )
    assert messages_of(response) == [
        "Nothing was saved: the category “Homework” needs a whole number between 0 and 50 of lowest results to drop."
    ]
    category.refresh_from_db()
    assert (category.weight, category.drop_lowest) == (40, 0)


@pytest.fixture
def essay(people):
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    variant = variant_for(assignment.items.get(), people.student, params={"d": 64})
    submission = submission_add(variant, "why", "Because it grows.", awarded=None, status=SubmissionStatus.MANUAL)
    return {"assignment": assignment, "item": assignment.items.get(), "submission": submission}


@pytest.mark.parametrize("typed", ["1.5", "-0.1", "abc"])
def test_a_typed_score_out_of_range_says_what_to_type_and_saves_nothing(client, people, essay, typed):
    client.login(username="tariq", password=PASSWORD)
    submission = essay["submission"]
    response = client.post(reverse("instructor:manual_grade", args=["attn", submission.pk]), {"score": typed})
    page = response.content.decode()
    assert response.status_code == 422
    assert ('<span class="bad" role="alert" id="score-error">Give the score as a fraction between 0 and 1 of the '
            "part&#x27;s points (0.5 is half of them).</span>") in page
    assert "no rubric points" not in page
    submission.refresh_from_db()
    assert (submission.status, submission.score) == (SubmissionStatus.MANUAL, None)


def test_a_graded_free_text_answer_leads_to_changing_its_grade(client, people, essay):
    client.login(username="tariq", password=PASSWORD)
    submission, item = essay["submission"], essay["item"]
    url = reverse("instructor:submission", args=["attn", submission.pk])
    assert 'id="grade-again"' not in client.get(url).content.decode()  # waiting: "Grade this answer"
    services.submission_grade_manually(submission=submission, grader=people.ta, score=0.5, criteria_met=[], comment="")
    page = client.get(url).content.decode()
    manual = reverse("instructor:manual_grade", args=["attn", submission.pk])
    question = reverse("instructor:grading_question", args=["attn", item.pk, "why"])
    assert (f'<p id="grade-again">A person graded this answer. To change its grade, <a class="button" '
            f'href="{manual}">give it another score</a> or tick other items of <a href="{question}">the '
            "question's rubric</a>; its grading history below keeps the earlier grades.</p>") in page
    assert client.get(manual).status_code == 200 and client.get(question).status_code == 200


def test_a_student_whose_hand_grade_is_withheld_is_not_told_nothing_was_graded(client, people, essay):
    assignment = essay["assignment"]
    assignment.show_correctness = assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.save()
    services.submission_grade_manually(
        submission=essay["submission"], grader=people.ta, score=0.5, criteria_met=[], comment="",
    )
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("grades:mine")).content.decode()
    assert ("<p id=\"no-graded-answers\">Nothing here yet: no answer of yours graded by a person can be shown (a "
            "grade appears here once the assignment's review policy shows it), and you have not asked about "
            "any.</p>") in page
    assert "none of your answers has been graded" not in page


def test_removing_a_category_is_its_own_form_that_asks_first(client, people):
    client.login(username="ines", password=PASSWORD)
    category = GradeCategory.objects.create(course=people.course, name="<b>Quizzes</b>", weight=40, drop_lowest=0)
    page = client.get(reverse("instructor:course_gradebook", args=["attn"])).content.decode()
    action = reverse("instructor:grade_category_edit", args=["attn", category.pk])
    removal = re.search(rf'<form method="post" action="{action}" class="aq-inline-form" data-confirm="([^"]*)">(.*?)</form>',
                        page, re.S)
    assert removal[1] == (
        "Remove the category “&lt;b&gt;Quizzes&lt;/b&gt;” (40 %)? Its assignments then count in no category, "
        "and every student&#x27;s total is worked out again without it at once."
    ).replace("&#x27;", "'")
    assert 'name="delete" value="1"' in removal[2] and 'name="weight"' not in removal[2]
    response = client.post(action, {"delete": "1"})
    assert messages_of(response) == [
        "Removed the category <b>Quizzes</b>; its assignments now count in none."
    ]
    assert not GradeCategory.objects.filter(pk=category.pk).exists()


def setup_problems(client) -> list[str]:
    page = client.get(reverse("instructor:course_gradebook", args=["attn"])).content.decode()
    found = re.search(r'<ul class="card bad" id="gradebook-setup"[^>]*>(.*?)</ul>', page, re.S)
    return re.findall(r"<li>(.*?)</li>", found[1], re.S) if found else []


def test_the_gradebook_says_what_leaves_points_out_of_the_totals(client, people):
    from instructor import services_gradebook

    client.login(username="tariq", password=PASSWORD)
    version = published_version(source=FREE_TEXT_YAML)
    week1 = assignment_create(people.course, [version], slug="week1")
    week2 = assignment_create(people.course, [version], slug="week2")
    assert setup_problems(client) == []  # no categories: everything counts
    homework = services_gradebook.grade_category_create(course=people.course, name="Homework", weight=40)
    services_gradebook.grade_category_create(course=people.course, name="Exams", weight=60)
    assert setup_problems(client) == [
        "2 assignments (“Week1” and “Week2”) count in no category: their points are left out of every total. "
        "Choose a category for each under “Which category each assignment counts in”.",
        "The category “Homework” (40 %) holds no assignment: it counts nothing, and the totals weigh only the "
        "other categories until an assignment is put in it.",
        "The category “Exams” (60 %) holds no assignment: it counts nothing, and the totals weigh only the "
        "other categories until an assignment is put in it.",
    ]
    services_gradebook.assignment_category_set(assignment=week1, category=homework)
    assert setup_problems(client) == [
        "1 assignment (“Week2”) counts in no category: its points are left out of every total. "
        "Choose a category for it under “Which category each assignment counts in”.",
        "The category “Exams” (60 %) holds no assignment: it counts nothing, and the totals weigh only the "
        "other categories until an assignment is put in it.",
    ]
    services_gradebook.assignment_category_set(assignment=week2, category=homework)
    services_gradebook.grade_category_update(
        category=people.course.grade_categories.get(name="Exams"), name="Exams", weight=0, drop_lowest=0,
    )
    assert setup_problems(client) == []
    services_gradebook.grade_category_update(category=homework, name="Homework", weight=0, drop_lowest=0)
    assert setup_problems(client) == [
        "Every category weighs 0 %: no total can be worked out. Give the categories their weights."
    ]
