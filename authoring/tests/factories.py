"""Test data shared by the authoring and instructor tests: a course with one person per
role, a second course with its own instructor, and small exercises with known answers."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from authoring.services import source_hash
from courses.models import Assignment, AssignmentItem, Course, Enrolment, Role
from exercises import engine
from exercises.models import Exercise, ExerciseVersion, Variant, VersionStatus
from grading.models import Submission, SubmissionStatus

PASSWORD = "pw-for-tests"

PRODUCT_YAML = """\
slug: {slug}
title: Product of two numbers
version: 1
parameters:
  a: {{generator: int_range, min: 2, max: 9}}
  b: {{generator: int_range, min: 2, max: 9}}
prompt: |
  Multiply ${{{{a}}}}$ by ${{{{b}}}}$.
parts:
  - key: product
    type: numeric
    answer: "{answer}"
    decimals: 0
    points: {points}
    solution: |
      The product is {{{{a * b}}}}.
  - key: total
    type: numeric
    answer: "a + b"
    decimals: 0
    solution: |
      The sum is {{{{a + b}}}}.
"""

FREE_TEXT_YAML = """\
slug: explain-scaling
title: Why scale by the square root of d_k
version: 1
parameters:
  d: {generator: fixed, value: 64}
prompt: |
  Explain why scores are divided by $\\sqrt{ {{d}} }$.
parts:
  - key: why
    type: free_text
    answer:
      - text: mentions that the dot product's variance grows with d_k
        points: 2
      - text: mentions that large scores saturate the softmax
        points: 1
    solution: |
      The variance of a dot product of d unit-variance terms is d.
"""


def product_yaml(*, slug: str = "product", answer: str = "a * b", points: int = 1) -> str:
    return PRODUCT_YAML.format(slug=slug, answer=answer, points=points)


@dataclass
class People:
    course: Course
    other_course: Course
    instructor: object
    reviewer: object
    ta: object
    student: object
    student2: object
    outsider: object  # instructor of the other course only


def user_create(username: str, **fields):
    return get_user_model().objects.create_user(username=username, password=PASSWORD, **fields)


def people_create() -> People:
    course = Course.objects.create(slug="attn", title="Attention")
    other = Course.objects.create(slug="other", title="Another course")
    people = People(
        course=course,
        other_course=other,
        instructor=user_create("ines"),
        reviewer=user_create("rita"),
        ta=user_create("tariq"),
        student=user_create("sam", first_name="Sam", last_name="Stone"),
        student2=user_create("sue", first_name="Sue", last_name="Shaw"),
        outsider=user_create("otto"),
    )
    for user, role in (
        (people.instructor, Role.INSTRUCTOR),
        (people.reviewer, Role.INSTRUCTOR),
        (people.ta, Role.TEACHING_ASSISTANT),
        (people.student, Role.STUDENT),
        (people.student2, Role.STUDENT),
    ):
        Enrolment.objects.create(course=course, user=user, role=role)
    Enrolment.objects.create(course=other, user=people.outsider, role=Role.INSTRUCTOR)
    return people


def published_version(*, source: str, number: int = 1, exercise: Exercise | None = None) -> ExerciseVersion:
    """A published library version (as the bank loader makes them), without an owner."""
    spec = engine.load_spec(source)
    if exercise is None:
        exercise = Exercise.objects.create(slug=spec.slug, title=spec.title)
    return ExerciseVersion.objects.create(
        exercise=exercise, number=number, source=source, spec=engine.spec_to_json(spec),
        content_hash=source_hash(source), status=VersionStatus.PUBLISHED,
    )


def assignment_create(course: Course, versions: list[ExerciseVersion], *, slug="week1", **fields) -> Assignment:
    assignment = Assignment.objects.create(course=course, slug=slug, title=slug.title(), **fields)
    for position, version in enumerate(versions):
        AssignmentItem.objects.create(assignment=assignment, exercise_version=version, position=position)
    return assignment


def variant_for(item: AssignmentItem, student, *, params: dict, seed: int = 1) -> Variant:
    return Variant.objects.create(
        exercise_version=item.exercise_version, student=student, assignment_item=item,
        context=f"assignment:{item.pk}", seed=seed, params=params,
    )


def submission_add(variant: Variant, part: str, raw_answer, *, awarded: float | None, correct: bool | None = None,
                   status: str = SubmissionStatus.GRADED, misconception: str = "", score: float | None = None) -> Submission:
    attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
    if correct is None and awarded is not None:
        correct = awarded >= 1.0
    return Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=attempt,
        status=status, score=awarded if score is None else score, awarded=awarded, correct=correct,
        misconception=misconception,
    )


ROLES = ("anonymous", "student", "ta", "instructor", "outsider")
ROLE_USERS = {"student": "sam", "ta": "tariq", "instructor": "ines", "outsider": "otto"}


def request_as(client, role: str, method: str, url: str, data=None):
    """One request as one of ROLES (of people_create); anonymous must be sent to log in."""
    from django.urls import reverse

    if role in ROLE_USERS:
        client.login(username=ROLE_USERS[role], password=PASSWORD)
    response = getattr(client, method)(url, data or {})
    if role == "anonymous" and response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
    return response
