""""Add someone" on the people page lowers no staff member's role without asking: the
form's role starts at "student", and typing a colleague's username made them a student
at once (``services_people.enrolment_add_asking``)."""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse

from attnquiz.confirmations import ConfirmationNeeded
from courses import services_people
from courses.forms import PersonAddForm
from courses.models import Enrolment, EnrolmentStatus, Role

RITA_TO_STUDENT = (
    "rita is an instructor of this course. Adding rita as a student changes their role at once: they lose "
    "the course's staff pages (gradebook, grading, people) and see the course as a student does. To keep their role, "
    "cancel; to add someone else, check the username or e-mail."
)


def role_of(people, user) -> str:
    return Enrolment.objects.get(course=people.course, user=user).role


@pytest.mark.parametrize(("who", "role", "question"), [
    ("rita", Role.STUDENT, RITA_TO_STUDENT),
    ("RITA ", Role.STUDENT, ""),  # usernames are exact: nobody is found, nobody asked about
    ("rita", Role.TEACHING_ASSISTANT,
     "rita is an instructor of this course. Adding rita as a teaching assistant changes their role at once: "
     "they lose what only instructors do (people, roster, settings, categories). To keep their role, cancel; "
     "to add someone else, check the username or e-mail."),
    ("tariq", Role.STUDENT,
     "tariq is a teaching assistant of this course. Adding tariq as a student changes their role at once: "
     "they lose the course's staff pages (gradebook, grading, people) and see the course as a student does. To keep "
     "their role, cancel; to add someone else, check the username or e-mail."),
    ("rita", Role.INSTRUCTOR, ""),  # the same role
    ("tariq", Role.INSTRUCTOR, ""),  # a higher role takes nothing away
    ("sam", Role.TEACHING_ASSISTANT, ""),
    ("sam", Role.STUDENT, ""),
    ("otto", Role.STUDENT, ""),  # not in this course: invited, as before
    ("nobody", Role.STUDENT, ""),
])
def test_the_question_names_the_person_their_role_and_what_they_lose(people, who, role, question):
    assert services_people.person_add_role_question(course=people.course, identifier=who, role=role) == question


def test_a_dropped_member_of_staff_is_not_asked_about(people):
    Enrolment.objects.filter(course=people.course, user=people.ta).update(status=EnrolmentStatus.DROPPED)
    assert services_people.person_add_role_question(course=people.course, identifier="tariq", role=Role.STUDENT) == ""


def test_lowering_a_role_asks_first_and_changes_nothing_until_confirmed(people):
    with pytest.raises(ConfirmationNeeded) as asked:
        services_people.enrolment_add_asking(
            course=people.course, identifier="rita", role=Role.STUDENT, actor=people.instructor, confirmed=False,
        )
    assert asked.value.message == RITA_TO_STUDENT
    assert role_of(people, people.reviewer) == Role.INSTRUCTOR
    change = services_people.enrolment_add_asking(
        course=people.course, identifier="rita", role=Role.STUDENT, actor=people.instructor,
        confirmed=asked.value.token,
    )
    assert (change.action, change.previous_role, role_of(people, people.reviewer)) == (
        "role changed", Role.INSTRUCTOR, Role.STUDENT,
    )


def test_a_confirmation_for_one_role_does_not_confirm_another(people):
    with pytest.raises(ConfirmationNeeded) as asked:
        services_people.enrolment_add_asking(
            course=people.course, identifier="rita", role=Role.TEACHING_ASSISTANT, actor=people.instructor,
            confirmed=False,
        )
    with pytest.raises(ConfirmationNeeded):
        services_people.enrolment_add_asking(
            course=people.course, identifier="rita", role=Role.STUDENT, actor=people.instructor,
            confirmed=asked.value.token,
        )
    assert role_of(people, people.reviewer) == Role.INSTRUCTOR


def test_what_takes_nothing_away_is_not_asked(people):
    change = services_people.enrolment_add_asking(
        course=people.course, identifier="tariq", role=Role.INSTRUCTOR, actor=people.instructor, confirmed=False,
    )
    assert (change.action, role_of(people, people.ta)) == ("role changed", Role.INSTRUCTOR)
    change = services_people.enrolment_add_asking(
        course=people.course, identifier="otto", role=Role.STUDENT, actor=people.instructor, confirmed=False,
    )
    assert change.action == "invited"


def test_the_people_page_shows_the_question_with_the_fields_to_send_again(people):
    form = PersonAddForm({"identifier": "rita", "role": "student", "student_id": "", "invite": "on"})
    form.is_valid()
    request = RequestFactory().get("/")
    request.user = people.instructor
    html = render_to_string(
        "courses/_person_add_confirmation.html",
        {"course": people.course, "form": form, "people_url": "/courses/attn/people/",
         "person_add_confirmation": {"message": RITA_TO_STUDENT, "token": "tok", "stale": False}},
        request=request,
    )
    assert 'action="/courses/attn/people/add/"' in html
    assert "<strong>Nothing is changed yet.</strong> rita is an instructor of this course." in html
    for field in ('name="identifier" value="rita"', 'name="role" value="student"', 'name="invite" value="on"',
                  'name="impact" value="tok"', 'name="confirm" value="yes"'):
        assert field in html


def test_add_someone_on_the_page_asks_then_changes_the_role_only_when_confirmed(client, people):
    client.force_login(people.instructor)
    url = reverse("courses:person_add", args=[people.course.slug])
    fields = {"identifier": "rita", "role": "student", "student_id": ""}
    asked = client.post(url, fields)
    assert asked.status_code == 200
    assert role_of(people, people.reviewer) == Role.INSTRUCTOR
    html = asked.content.decode()
    assert "<strong>Nothing is changed yet.</strong> rita is an instructor of this course." in html
    token = re.search(r'name="impact" value="([^"]+)"', html).group(1)
    done = client.post(url, {**fields, "confirm": "yes", "impact": token})
    assert done.status_code == 302
    assert role_of(people, people.reviewer) == Role.STUDENT


def test_add_someone_with_a_forged_token_still_only_asks(client, people):
    client.force_login(people.instructor)
    url = reverse("courses:person_add", args=[people.course.slug])
    response = client.post(url, {"identifier": "tariq", "role": "student", "confirm": "yes", "impact": "forged"})
    assert response.status_code == 200
    assert "tariq is a teaching assistant of this course." in response.content.decode()
    assert role_of(people, people.ta) == Role.TEACHING_ASSISTANT
