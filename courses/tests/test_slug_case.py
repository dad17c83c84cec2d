"""Short names in capitals, from before they were stored in lower case (or from the admin):
an address naming a course or assignment in another case leads to it (a permanent redirect
to the stored name, for someone who may open it; read case-insensitively elsewhere), and
every way of giving a short name stores it in lower case, refusing with a message one that
differs from a taken one only in case."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from courses import selectors, services
from courses.models import Assignment, Course, Enrolment, Role
from lti.tests.conftest import lms, platform_private_key  # noqa: F401 (fixtures of the LMS)


@pytest.fixture
def old(people):
    """The course stored as "Attn-Old", with a published "Week2" and an unpublished "Draft1"."""
    Course.objects.filter(pk=people.course.pk).update(slug="Attn-Old")
    people.course.refresh_from_db()
    version = published_version(source=product_yaml())
    assignment_create(people.course, [version], slug="Week2", is_published=True)
    assignment_create(people.course, [version], slug="Draft1", is_published=False)
    return people


def _get(client, user, path, method="get"):
    client.force_login(user)
    return getattr(client, method)(path)


@pytest.mark.parametrize("who, method, path, status, location", [
    ("instructor", "get", "/courses/attn-old/", 301, "/courses/Attn-Old/"),
    ("instructor", "get", "/courses/ATTN-OLD/people/", 301, "/courses/Attn-Old/people/"),
    ("instructor", "get", "/teach/attn-old/", 301, "/teach/Attn-Old/"),
    ("instructor", "get", "/teach/attn-old/a/week2/", 301, "/teach/Attn-Old/a/Week2/"),
    ("instructor", "get", "/teach/Attn-Old/a/WEEK2/gradebook/?sort=name", 301,
     "/teach/Attn-Old/a/Week2/gradebook/?sort=name"),
    ("instructor", "get", "/teach/attn-old/a/draft1/edit/", 301, "/teach/Attn-Old/a/Draft1/edit/"),
    ("instructor", "post", "/teach/attn-old/a/week2/edit/", 308, "/teach/Attn-Old/a/Week2/edit/"),
    ("instructor", "head", "/teach/attn-old/a/week2/accommodations/", 301, "/teach/Attn-Old/a/Week2/accommodations/"),
    ("student", "get", "/courses/attn-old/assignments/week2/", 301, "/courses/Attn-Old/assignments/Week2/"),
    ("instructor", "get", "/api/v1/courses/attn-old/assignments/", 301, "/api/v1/courses/Attn-Old/assignments/"),
], ids=lambda value: value if isinstance(value, str) and value.startswith("/") else None)
def test_an_address_in_another_case_redirects_to_the_stored_one(client, old, who, method, path, status, location):
    response = _get(client, getattr(old, who), path, method)
    assert (response.status_code, response["Location"]) == (status, location)


@pytest.mark.parametrize("path", [
    "/courses/Attn-Old/people/", "/teach/Attn-Old/a/Week2/", "/courses/Attn-Old/assignments/Week2/",
])
def test_the_stored_address_is_served_as_it_is(client, old, path):
    assert _get(client, old.instructor, path).status_code == 200


def _subplans_run(sql: str, params) -> list[int]:
    """How many times PostgreSQL ran each sub-plan of the query (EXPLAIN ANALYZE's loops)."""
    import json

    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    loops = []

    def walk(node):
        if node.get("Parent Relationship") == "SubPlan" or node.get("Subplan Name"):
            loops.append(node.get("Actual Loops", 0))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return loops


@pytest.mark.parametrize("typed, named, case_search_runs", [
    ("Week2", 1, 0),  # the exam hour's pages: the look over the lower-cased names never runs
    ("WEEK2", 2, 1),  # a miss looks in another case, in the same query
    ("nowhere", 0, 1),
])
def test_only_an_assignment_missed_as_typed_is_looked_for_in_another_case(old, typed, named, case_search_runs):
    from django.db import connection

    from courses import middleware

    values = {"slug": "Attn-Old", "assignment_slug": typed, "assignment_slug_lower": typed.lower()}
    assert middleware._TIME_ZONE_AND_ASSIGNMENT.first(**values)[1] == named
    queryset = middleware._TIME_ZONE_AND_ASSIGNMENT._build(**values)
    sql, params = queryset.query.sql_with_params()
    assert connection.vendor == "postgresql"
    assert _subplans_run(sql, params) == [1, case_search_runs]


@pytest.mark.parametrize("who, path", [
    ("outsider", "/courses/attn-old/"),  # not in the course: its existence is not revealed
    ("outsider", "/teach/attn-old/a/week2/"),
    ("student", "/courses/attn-old/assignments/draft1/"),  # unpublished: students do not learn of it
    ("instructor", "/courses/no-such-course/"),
    ("instructor", "/teach/attn-old/a/no-such/"),
])
def test_nothing_hidden_or_missing_is_redirected_to(client, old, who, path):
    response = _get(client, getattr(old, who), path)
    assert response.status_code == 404
    assert not response.has_header("Location")


def test_a_name_stored_in_two_cases_is_read_as_given_and_is_otherwise_not_guessed(client, old):
    twin = Course.objects.create(slug="attn-old", title="Lower twin")
    Enrolment.objects.create(course=twin, user=old.instructor, role=Role.INSTRUCTOR)
    assert _get(client, old.instructor, "/courses/attn-old/people/").context["course"] == twin
    assert _get(client, old.instructor, "/courses/Attn-Old/people/").context["course"] == old.course
    assert _get(client, old.instructor, "/courses/ATTN-OLD/people/").status_code == 404  # which one? neither


def test_reads_by_short_name_ignore_case_for_callers_without_a_redirect(old):
    """An API client with a token (signed in only inside the view) reads the same rows."""
    course, role = selectors.access_course(user=old.instructor, slug="attn-old")
    assert (course.slug, role) == ("Attn-Old", Role.INSTRUCTOR)
    assignment, _ = selectors.access_assignment(user=old.student, course_slug="ATTN-OLD", assignment_slug="week2")
    assert assignment.slug == "Week2"
    staff, _ = selectors.access_staff_assignment(user=old.instructor, course_slug="attn-old", assignment_slug="draft1")
    assert staff.slug == "Draft1"
    assert selectors.course_named_by_url({"course_slug": "attn-OLD"}) == old.course


def test_an_api_client_with_a_token_reads_an_address_in_another_case(client, old):
    from api.models import TokenScope
    from api.services import api_token_create

    secret = api_token_create(user=old.instructor, name="t", scope=TokenScope.READ, lifetime_days=30)[1]
    response = client.get("/api/v1/courses/attn-old/assignments/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    assert sorted(row["slug"] for row in response.json()) == ["Draft1", "Week2"]


# ---------------------------------------------------------------------------
# Every way of giving a short name stores it in lower case
# ---------------------------------------------------------------------------


def _assignment_form(title: str, slug: str) -> dict:
    return {
        "title": title, "slug": slug, "attempts_per_part": "3", "penalty_per_extra_attempt": "0",
        "late_penalty": "0", "solution_policy": "after_due",
    }


def test_a_new_assignments_short_name_is_stored_in_lower_case(client, old):
    client.force_login(old.instructor)
    response = client.post(reverse("instructor:assignment_new", args=["Attn-Old"]), _assignment_form("Week 3", "Week3"))
    assert response.status_code == 302
    assert old.course.assignments.filter(title="Week 3").get().slug == "week3"


def test_a_new_assignment_named_as_another_in_another_case_is_refused_on_the_form(client, old):
    client.force_login(old.instructor)
    response = client.post(reverse("instructor:assignment_new", args=["Attn-Old"]), _assignment_form("Again", "WEEK2"))
    assert response.status_code == 422
    assert response.context["form"].errors["slug"] == ["This course already has an assignment called 'Week2'."]
    assert old.course.assignments.count() == 2


def test_editing_keeps_a_stored_capital_name_and_stores_a_new_one_in_lower_case(client, old):
    client.force_login(old.instructor)
    edit = reverse("instructor:assignment_edit", args=["Attn-Old", "Week2"])
    assert client.post(edit, _assignment_form("Week two", "Week2")).status_code == 302
    assert old.course.assignments.get(title="Week two").slug == "Week2"  # untouched: links to it keep working
    assert client.post(edit, _assignment_form("Week two", "Week-Two")).status_code == 302
    assert old.course.assignments.get(title="Week two").slug == "week-two"


def test_renaming_to_another_assignments_name_in_another_case_is_refused(client, old):
    client.force_login(old.instructor)
    response = client.post(
        reverse("instructor:assignment_edit", args=["Attn-Old", "Draft1"]), _assignment_form("Draft", "week2"),
    )
    assert response.status_code == 422
    assert response.context["form"].errors["slug"] == ["This course already has an assignment called 'Week2'."]
    assert sorted(old.course.assignments.values_list("slug", flat=True)) == ["Draft1", "Week2"]


@pytest.mark.parametrize("slug, stored", [("Week9", "week9"), (" LMS-Quiz ", "lms-quiz")])
def test_the_service_stores_lower_case(old, slug, stored):
    """As the LMS's new assignments (lti) and every other caller of the service get."""
    assert services.assignment_create(course=old.course, title="T", slug=slug).slug == stored


@pytest.mark.parametrize("slug", ["week2", "WEEK2", " Week2 "])
def test_the_service_refuses_a_name_taken_in_another_case(old, slug):
    with pytest.raises(services.CourseRefused, match="This course already has an assignment called 'Week2'."):
        services.assignment_create(course=old.course, title="T", slug=slug)


def test_a_copy_stores_its_assignments_names_in_lower_case_each_once(client, old):
    services.course_creation_grant(user=old.instructor)
    Assignment.objects.create(course=old.course, slug="week2", title="Lower twin")  # stored beside "Week2"
    client.force_login(old.instructor)
    page = client.get(reverse("courses:copy", args=["Attn-Old"]))
    assert page.context["form"].initial["slug"] == "attn-old-copy"
    response = client.post(reverse("courses:copy", args=["Attn-Old"]), {
        "title": "Attention", "slug": "Attn-2027", "term": "", "offset_days": "0",
    })
    assert response.status_code == 302
    copy = Course.objects.get(slug="attn-2027")
    assert sorted(copy.assignments.values_list("title", "slug")) == [
        ("Draft1", "draft1"), ("Lower twin", "week2"), ("Week2", "week2-2"),  # the lower one keeps its name
    ]


def test_a_copy_named_as_a_course_in_another_case_is_refused_on_the_form(client, old):
    services.course_creation_grant(user=old.instructor)
    client.force_login(old.instructor)
    response = client.post(reverse("courses:copy", args=["Attn-Old"]), {
        "title": "Attention", "slug": "ATTN-OLD", "term": "", "offset_days": "0",
    })
    assert response.status_code == 422
    assert response.context["form"].errors["slug"] == [
        "There is already a course called 'attn-old'; choose another short name."
    ]
    assert Course.objects.count() == 2


def test_an_lms_link_given_the_name_of_an_assignment_in_capitals_makes_one_under_another_name(client, lms):
    """The LMS's new assignment is made from its title (in lower case); "Week-3" stored in
    capitals already holds that name: the new one steps around it, as it does around a name
    in lower case, and each keeps its own address (not a 500, nor a second "week-3")."""
    from lti.models import ResourceLink
    from lti.tests.test_views import INSTRUCTOR

    lms.login_and_launch(client, sub="prof-1", roles=[INSTRUCTOR])
    link = ResourceLink.objects.get()
    Assignment.objects.create(course=link.context.course, slug="Week-3", title="Week 3, from before")
    response = client.post(f"/lti/links/{link.pk}/", {"new_title": "Week 3"})
    made = link.context.course.assignments.exclude(slug="Week-3").get()
    assert re.fullmatch(r"week-3-[0-9a-f]{4}", made.slug)
    assert (response.status_code, response["Location"]) == (302, f"/teach/{link.context.course.slug}/a/{made.slug}/")
    link.refresh_from_db()
    assert link.assignment == made
