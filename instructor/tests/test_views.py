"""Every teaching URL for every role, and the assignment forms' validation."""

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, ROLES, request_as, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from courses.models import Assignment
from grading.models import SubmissionStatus
from instructor import services
from instructor.models import GradeCategory, RegradeRequest



@pytest.fixture
def world(people):
    product = published_version(source=product_yaml())
    essay = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [product, essay])
    product_item, essay_item = assignment.items.all()
    variant = variant_for(product_item, people.student, params={"a": 3, "b": 4})
    checked = submission_add(variant, "product", "12", awarded=1.0)
    hand_graded = services.submission_grade_manually(
        submission=submission_add(variant, "product", "13", awarded=0.0), grader=people.ta, score=0.5
    )
    essay_variant = variant_for(essay_item, people.student, params={"d": 64})
    manual = submission_add(essay_variant, "why", "Because variance grows.", awarded=None, status=SubmissionStatus.MANUAL)
    job = services.regrade_job_create(assignment=assignment, actor=people.instructor)
    job.refresh_from_db()
    category = GradeCategory.objects.create(course=people.course, name="Exams", weight=60)
    graded = submission_add(essay_variant, "why", "Second try.", awarded=0.5)
    request = RegradeRequest.objects.create(submission=graded, student=people.student, message="Look again")
    return {"assignment": assignment, "item": product_item, "manual": manual, "job": job, "student": people.student,
            "category": category, "request": request, "checked": checked,
            "hand_graded": hand_graded}


def urls(world):
    c, a = "attn", world["assignment"].slug
    item = world["item"].pk
    essay = world["manual"].variant.assignment_item_id
    return [
        ("course", "get", reverse("instructor:course", args=[c]), None, (302, 403, 200, 200, 404)),
        ("assignment_new", "get", reverse("instructor:assignment_new", args=[c]), None, (302, 403, 403, 200, 404)),
        ("assignment", "get", reverse("instructor:assignment", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("assignment_edit", "get", reverse("instructor:assignment_edit", args=[c, a]), None, (302, 403, 403, 200, 404)),
        ("item_add", "post", reverse("instructor:item_add", args=[c, a]), {"points": "1"}, (302, 403, 403, 302, 404)),
        ("exercise_picker", "get", reverse("instructor:exercise_picker", args=[c, a]), {"q": "product"},
         (302, 403, 403, 200, 404)),
        ("exercise_preview", "get", reverse("instructor:exercise_preview", args=[c, a, world["item"].exercise_version_id]),
         None, (302, 403, 403, 200, 404)),
        # The student has started this homework: new pools or points ask first (a page, 200).
        ("item_pools", "post", reverse("instructor:item_pools", args=[c, a]), {f"pool_{item}": "p"}, (302, 403, 403, 200, 404)),
        ("item_update", "post", reverse("instructor:item_update", args=[c, a, item]), {"points": "2", "position": "1"}, (302, 403, 403, 200, 404)),
        ("item_remove", "post", reverse("instructor:item_remove", args=[c, a, item]), {}, (302, 403, 403, 302, 404)),
        ("gradebook", "get", reverse("instructor:gradebook", args=[c, a]), {"student": "s", "exercise": "x"}, (302, 403, 200, 200, 404)),
        ("gradebook_csv", "get", reverse("instructor:gradebook_csv", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("gradebook_xlsx", "get", reverse("instructor:gradebook_xlsx", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("submissions_csv", "get", reverse("instructor:submissions_csv", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("student", "get", reverse("instructor:student", args=[c, a, world["student"].pk]), None, (302, 403, 200, 200, 404)),
        ("analytics", "get", reverse("instructor:analytics", args=[c, a]), None, (302, 403, 200, 200, 404)),
        ("pool_by_skill", "get", reverse("instructor:pool_by_skill", args=[c, a]), None, (302, 403, 403, 200, 404)),
        ("regrade_new", "get", reverse("instructor:regrade_new", args=[c, a]), None, (302, 403, 403, 200, 404)),
        ("submission", "get", reverse("instructor:submission", args=[c, world["manual"].pk]), None, (302, 403, 200, 200, 404)),
        ("submission_grade_by_hand", "post", reverse("instructor:submission_grade_by_hand", args=[c, world["checked"].pk]),
         {"score": "50", "unit": "percent"}, (302, 403, 302, 302, 404)),
        ("submission_grade_return_to_checker", "post",
         reverse("instructor:submission_grade_return_to_checker", args=[c, world["hand_graded"].pk]), {},
         (302, 403, 302, 302, 404)),
        ("manual_queue", "get", reverse("instructor:manual_queue", args=[c]), None, (302, 403, 200, 200, 404)),
        ("manual_grade", "get", reverse("instructor:manual_grade", args=[c, world["manual"].pk]), None, (302, 403, 200, 200, 404)),
        ("regrade", "get", reverse("instructor:regrade", args=[c, world["job"].pk]), None, (302, 403, 403, 200, 404)),
        ("regrade_progress", "get", reverse("instructor:regrade_progress", args=[c, world["job"].pk]), None, (302, 403, 403, 200, 404)),
        ("regrade_apply", "post", reverse("instructor:regrade_apply", args=[c, world["job"].pk]), {}, (302, 403, 403, 302, 404)),
        ("course_gradebook", "get", reverse("instructor:course_gradebook", args=[c]), {"student": "s"}, (302, 403, 200, 200, 404)),
        ("course_gradebook_csv", "get", reverse("instructor:course_gradebook_csv", args=[c]), None, (302, 403, 200, 200, 404)),
        ("course_gradebook_xlsx", "get", reverse("instructor:course_gradebook_xlsx", args=[c]), None, (302, 403, 200, 200, 404)),
        ("grade_category_add", "post", reverse("instructor:grade_category_add", args=[c]),
         {"name": "Homework", "weight": "40", "drop_lowest": "0"}, (302, 403, 403, 302, 404)),
        ("grade_category_edit", "post", reverse("instructor:grade_category_edit", args=[c, world["category"].pk]),
         {"name": "Exams", "weight": "60", "drop_lowest": "1"}, (302, 403, 403, 302, 404)),
        ("assignment_categories_set", "post", reverse("instructor:assignment_categories_set", args=[c]),
         {f"category-{world['assignment'].pk}": str(world["category"].pk)}, (302, 403, 403, 302, 404)),
        ("grading", "get", reverse("instructor:grading", args=[c]), None, (302, 403, 200, 200, 404)),
        ("grading_question", "get", reverse("instructor:grading_question", args=[c, essay, "why"]), None, (302, 403, 200, 200, 404)),
        ("grading_answer", "get", reverse("instructor:grading_answer", args=[c, essay, "why", world["request"].submission_id]), None,
         (302, 403, 200, 200, 404)),
        ("grading_rubric", "post", reverse("instructor:grading_rubric", args=[c, essay, "why"]), {"text": "t", "points": "1"},
         (302, 403, 302, 302, 404)),
        ("grading_apply", "post", reverse("instructor:grading_apply", args=[c, essay, "why"]), {}, (302, 403, 302, 302, 404)),
        ("regrade_requests", "get", reverse("instructor:regrade_requests", args=[c]), None, (302, 403, 200, 200, 404)),
        ("regrade_request_reply", "post", reverse("instructor:regrade_request_reply", args=[c, world["request"].pk]),
         {"reply": "ok"}, (302, 403, 302, 302, 404)),
    ]


URL_NAMES = [
    "course", "assignment_new", "assignment", "assignment_edit", "item_add", "exercise_picker", "exercise_preview", "item_pools", "item_update", "item_remove",
    "gradebook", "gradebook_csv", "gradebook_xlsx", "submissions_csv", "student", "analytics", "pool_by_skill", "regrade_new", "submission",
    "submission_grade_by_hand", "submission_grade_return_to_checker", "manual_queue", "manual_grade", "regrade", "regrade_progress", "regrade_apply",
    "course_gradebook", "course_gradebook_csv", "course_gradebook_xlsx", "grade_category_add", "grade_category_edit",
    "assignment_categories_set", "grading", "grading_question", "grading_answer", "grading_rubric", "grading_apply",
    "regrade_requests", "regrade_request_reply",
]


def test_the_walk_covers_every_url_of_the_app():
    from instructor.urls import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted(URL_NAMES)


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name", URL_NAMES)
def test_every_url_for_every_role(client, people, world, role_index, role, name):
    _, method, url, data, expected = next(row for row in urls(world) if row[0] == name)
    assert request_as(client, role, method, url, data).status_code == expected[role_index], (role, name)


def test_students_and_outsiders_cannot_read_answers_through_the_api_either(client, people, world):
    """The student's own pages never show someone else's submission."""
    client.login(username="sue", password=PASSWORD)
    response = client.get(reverse("instructor:submission", args=["attn", world["manual"].pk]))
    assert response.status_code == 403
    client.login(username="otto", password=PASSWORD)
    assert client.get(reverse("instructor:submission", args=["other", world["manual"].pk])).status_code == 404


def test_assignment_form_creates_with_every_setting(client, people):
    published_version(source=product_yaml())
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("instructor:assignment_new", args=["attn"]), {
        "title": "Week 2", "slug": "week2", "opens_at": "2030-01-01T09:00", "due_at": "2030-01-08T09:00",
        "closes_at": "2030-01-10T09:00", "attempts_per_part": "4", "penalty_per_extra_attempt": "0.1",
        "late_penalty": "0.25", "time_limit_minutes": "45", "solution_policy": "after_due", "is_published": "on",
    })
    assert response.status_code == 302
    week2 = Assignment.objects.get(slug="week2")
    assert (week2.attempts_per_part, week2.penalty_per_extra_attempt, week2.late_penalty, week2.time_limit_minutes,
            week2.solution_policy, week2.is_published) == (4, 0.1, 0.25, 45, "after_due", True)
    assert week2.due_at.isoformat() == "2030-01-08T09:00:00+00:00"


def test_assignment_form_refuses_bad_dates_and_penalties_with_messages(client, people):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("instructor:assignment_new", args=["attn"]), {
        "title": "Bad", "slug": "bad", "opens_at": "2030-01-08T09:00", "due_at": "2030-01-01T09:00",
        "closes_at": "not a date", "attempts_per_part": "-1", "penalty_per_extra_attempt": "1.5",
        "late_penalty": "0", "solution_policy": "sometimes",
    })
    assert response.status_code == 422
    page = response.content.decode()
    for message in ("The due date is before the assignment opens.", "Enter a valid date/time.",
                    "Give a fraction between 0 and 1", "Select a valid choice"):
        assert message in page
    assert not Assignment.objects.filter(slug="bad").exists()
    assignment_create(people.course, [], slug="taken")
    duplicate = client.post(reverse("instructor:assignment_new", args=["attn"]), {
        "title": "Again", "slug": "taken", "attempts_per_part": "3", "penalty_per_extra_attempt": "0",
        "late_penalty": "0", "solution_policy": "never",
    })
    assert duplicate.status_code == 422 and "already has an assignment called" in duplicate.content.decode()


def test_only_published_versions_can_be_added_and_each_exercise_once(client, people):
    from authoring import services as authoring

    version = published_version(source=product_yaml())
    draft = authoring.exercise_create(course=people.course, actor=people.instructor, source=product_yaml(slug="fresh"))
    assignment = assignment_create(people.course, [])
    with pytest.raises(services.InstructorRefused, match="only published versions"):
        services.assignment_item_add(assignment=assignment, version=draft)
    item = services.assignment_item_add(assignment=assignment, version=version, points=2)
    assert (item.position, item.points) == (0, 2)
    with pytest.raises(services.InstructorRefused, match="already in this assignment"):
        services.assignment_item_add(assignment=assignment, version=version)
