"""Input a fuzz run turned into 500s, now refused with a 4xx and a message, nothing stored:

- NUL in an address or a query reaches no view (PostgreSQL refuses it in a
  query: a gradebook filter, a join code, an LTI launch's state);
- a date the site could store but never read back (9999-12-31 23:59 in a UTC−12 course is
  year 10000 in UTC) is refused by every date field, and by the save guard of any path;
- a form body posted to the answer preview (a JSON endpoint) is a 415;
- renaming an assignment to another one's short name is a message, not an IntegrityError.
"""

from __future__ import annotations

import datetime
import zoneinfo

import pytest
from django.urls import reverse

from attnquiz.input_limits import UnstorableDate, unstorable_date_reason
from authoring.tests.factories import PASSWORD, assignment_create, people_create, product_yaml, published_version
from courses.models import Assignment, Course

UTC = datetime.timezone.utc
WEST = zoneinfo.ZoneInfo("Etc/GMT+12")  # UTC−12: its last minute of 9999 is year 10000 in UTC
EAST = datetime.timezone(datetime.timedelta(hours=14))  # UTC+14, as Pacific/Kiritimati today

DATE_TABLE = [
    (datetime.datetime(9999, 12, 31, 23, 59, tzinfo=WEST), True),
    (datetime.datetime(3000, 1, 1, 0, 0, tzinfo=UTC), True),
    (datetime.datetime(2999, 12, 31, 23, 59, tzinfo=UTC), False),
    (datetime.datetime(3000, 1, 1, 9, 0, tzinfo=EAST), False),  # 2999-12-31 19:00 in UTC
    (datetime.datetime(1900, 1, 1, 0, 0, tzinfo=UTC), False),
    (datetime.datetime(1900, 1, 1, 0, 0, tzinfo=EAST), True),  # 1899 in UTC
    (datetime.datetime(1, 1, 1, 0, 0, tzinfo=EAST), True),  # before year 1 in UTC: no datetime at all
    (datetime.datetime(2027, 3, 5, 9, 0, tzinfo=WEST), False),
    (datetime.date(2027, 3, 5), False),
    (datetime.date(1899, 12, 31), True),
    (None, False),
]


@pytest.mark.parametrize("value, refused", DATE_TABLE)
def test_a_date_is_storable_between_1900_and_2999_in_utc(value, refused):
    assert (unstorable_date_reason(value) is not None) is refused


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def west_course(people):
    Course.objects.filter(pk=people.course.pk).update(time_zone="Etc/GMT+12")
    return assignment_create(people.course, [published_version(source=product_yaml())])


def test_the_save_guard_refuses_a_date_it_could_not_read_back_whatever_path_wrote_it(west_course):
    west_course.due_at = datetime.datetime(9999, 12, 31, 23, 59, tzinfo=WEST)
    with pytest.raises(UnstorableDate) as refused:
        west_course.save()
    assert refused.value.field == "due_at"
    assert refused.value.messages == [
        "This date is outside the years this site can store; give a date between 1 January 1900 "
        "and 31 December 2999."
    ]
    assert Assignment.objects.get(pk=west_course.pk).due_at is None


FAR = "9999-12-31T23:59"
FIELD_MESSAGE = "Give a date between 1 January 1900 and 31 December 2999."


def _assignment_form(**fields) -> dict:
    return {"title": "Week 1", "slug": "week1", "attempts_per_part": "3", "penalty_per_extra_attempt": "0",
            "late_penalty": "0", "solution_policy": "after_solved", "session_policy": "any", **fields}


@pytest.mark.parametrize("field", ["opens_at", "due_at", "closes_at"])
def test_the_assignment_form_refuses_a_date_past_the_stored_years(client, west_course, field):
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:assignment_edit", args=["attn", "week1"])
    response = client.post(url, _assignment_form(**{field: FAR}))
    assert response.status_code == 422
    assert FIELD_MESSAGE in response.content.decode()
    west_course.refresh_from_db()
    assert (west_course.opens_at, west_course.due_at, west_course.closes_at) == (None, None, None)
    # The course's pages still open: nothing unreadable was stored.
    assert client.get(reverse("instructor:assignment", args=["attn", "week1"])).status_code == 200
    # The last minute the site keeps is taken.
    assert client.post(url, _assignment_form(**{field: "2999-12-31T11:59"})).status_code == 302
    west_course.refresh_from_db()
    assert getattr(west_course, field) == datetime.datetime(2999, 12, 31, 23, 59, tzinfo=UTC)


def test_the_join_code_expiry_refuses_a_date_past_the_stored_years(client, west_course, people):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("courses:join_settings", args=["attn"]), {"join_expires_at": FAR})
    assert response.status_code == 422
    assert FIELD_MESSAGE in response.content.decode()
    people.course.refresh_from_db()
    assert people.course.join_expires_at is None


def test_a_grade_release_scheduled_past_the_stored_years_is_refused(client, west_course):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("exams:release", args=["attn", "week1"]), {"action": "schedule", "at": FAR})
    assert response.status_code in (400, 422)
    assert FIELD_MESSAGE in response.content.decode()
    west_course.refresh_from_db()
    assert west_course.grades_release_scheduled_at is None


@pytest.mark.parametrize("method, path, data", [
    ("get", "/teach/attn/a/week1/gradebook/?student=a%00b", None),
    ("get", "/teach/attn/gradebook/?student=a%00b", None),
    ("get", "/teach/attn/gradebook/?a%00b=1", None),
    ("get", "/join/a%00b/", None),
    ("post", "/join/a%00b/", {}),
    ("get", "/accounts/signup/?join=%00", None),
])
def test_nul_in_an_address_a_query_or_a_form_field_is_a_400_before_any_view(client, west_course, method, path, data):
    client.login(username="ines", password=PASSWORD)
    response = client.get(path) if method == "get" else client.post(path, data)
    assert response.status_code == 400
    page = response.content.decode()
    assert "That request could not be read" in page
    assert "holds a character no page accepts (NUL or a lone surrogate). Nothing was done" in page


def test_an_lti_launch_whose_state_holds_nul_is_refused_as_an_unknown_login(client):
    response = client.post("/lti/launch/", {"id_token": "abc", "state": "a\x00b"})
    assert response.status_code == 400
    assert "This launch&#x27;s login is unknown; open the link from the LMS again." in response.content.decode()


def test_nul_in_an_api_query_is_a_problem_document(client, west_course):
    client.login(username="ines", password=PASSWORD)
    response = client.get("/api/v1/courses/?page=%00")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "urn:attnquiz:problem:unreadable-request"
    assert response.json()["detail"].startswith("The field “page” holds a character no page accepts")


def test_a_clean_query_still_reaches_its_view(client, west_course):
    client.login(username="ines", password=PASSWORD)
    assert client.get("/teach/attn/a/week1/gradebook/?student=sam").status_code == 200


def test_a_form_body_to_the_answer_preview_is_a_415(client, people):
    client.login(username="sam", password=PASSWORD)
    response = client.post(reverse("preview"), {"type": "numeric", "answer": "1"})  # multipart
    assert response.status_code == 415
    assert response.json() == {"latex": None, "error": "Send the preview request as JSON."}


def test_renaming_an_assignment_to_another_ones_short_name_is_a_message(client, west_course, people):
    assignment_create(people.course, [published_version(source=product_yaml(slug="other-ex"))], slug="week2")
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("instructor:assignment_edit", args=["attn", "week1"]),
                           _assignment_form(slug="week2"))
    assert response.status_code == 422
    assert "This course already has an assignment called &#x27;week2&#x27;." in response.content.decode()
    assert sorted(Assignment.objects.filter(course=people.course).values_list("slug", flat=True)) == ["week1", "week2"]
