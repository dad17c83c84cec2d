"""Every course URL for every role, and what the pages do with good and bad input."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from authoring.tests.factories import PASSWORD, ROLES, request_as, assignment_create, product_yaml, published_version
from courses import services
from courses.models import Course, Enrolment, EnrolmentStatus, Role



@pytest.fixture
def world(people):
    for user in (people.instructor, people.outsider):
        services.course_creation_grant(user=user)
    services.join_code_rotate(course=people.course)
    people.course.refresh_from_db()
    assignment_create(people.course, [published_version(source=product_yaml())])
    # Otto has an account and is not in the course: adding him invites him.
    invited = services.enrolment_add(course=people.course, identifier="otto", role=Role.STUDENT, actor=people.instructor)
    return {
        "code": people.course.join_code, "sue": Enrolment.objects.get(course=people.course, user=people.student2),
        "invitation": invited.invitation,
    }


def urls(world):
    c, code, sue, invitation = "attn", world["code"], world["sue"].pk, world["invitation"].pk
    return [
        ("new", "get", reverse("courses:new"), None, (302, 403, 403, 200, 200)),
        ("home", "get", reverse("courses:home", args=[c]), None, (302, 302, 302, 302, 404)),
        ("settings", "get", reverse("courses:settings", args=[c]), None, (302, 403, 200, 200, 404)),
        ("settings_post", "post", reverse("courses:settings", args=[c]), {"title": "T", "time_zone": "UTC"}, (302, 403, 403, 302, 404)),
        ("join_settings", "post", reverse("courses:join_settings", args=[c]), {"join_open": "on"}, (302, 403, 403, 302, 404)),
        ("archive", "post", reverse("courses:archive", args=[c]), {"archived": "0"}, (302, 403, 403, 302, 404)),
        ("copy", "get", reverse("courses:copy", args=[c]), None, (302, 403, 403, 200, 404)),
        ("people", "get", reverse("courses:people", args=[c]), None, (302, 403, 200, 200, 404)),
        ("person_add", "post", reverse("courses:person_add", args=[c]), {"identifier": "otto", "role": "ta"}, (302, 403, 403, 302, 404)),
        ("roster", "get", reverse("courses:roster", args=[c]), None, (302, 403, 403, 200, 404)),
        ("person_remove", "post", reverse("courses:person_remove", args=[c, sue]), {}, (302, 403, 403, 302, 404)),
        ("person_restore", "post", reverse("courses:person_restore", args=[c, sue]), {}, (302, 403, 403, 302, 404)),
        ("person_invite", "post", reverse("courses:person_invite", args=[c, sue]), {}, (302, 403, 403, 302, 404)),
        ("people_invite_again", "post", reverse("courses:people_invite_again", args=[c]), {}, (302, 403, 403, 302, 404)),
        ("invitation_withdraw", "post", reverse("courses:invitation_withdraw", args=[c, invitation]), {}, (302, 403, 403, 302, 404)),
        # Only the invited person sees their invitation: 404 for everyone else, staff included.
        ("invitation_accept", "post", reverse("courses:invitation_accept", args=[invitation]), {}, (302, 404, 404, 404, 302)),
        ("invitation_decline", "post", reverse("courses:invitation_decline", args=[invitation]), {}, (302, 404, 404, 404, 302)),
        ("join_enter", "post", reverse("courses:join_enter"), {"code": code}, (302, 302, 302, 302, 302)),
        ("join", "get", reverse("courses:join", args=[code]), None, (200, 200, 200, 200, 200)),
        ("join_post", "post", reverse("courses:join", args=[code]), {}, (302, 302, 302, 302, 302)),
    ]


URL_NAMES = [
    "new", "home", "settings", "join_settings", "archive", "copy", "people", "person_add", "roster",
    "person_remove", "person_restore", "person_invite", "people_invite_again", "invitation_withdraw",
    "invitation_accept", "invitation_decline", "join_enter", "join",
]


def test_the_walk_covers_every_url_of_the_app():
    from courses.urls import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted(URL_NAMES)


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name", URL_NAMES + ["settings_post", "join_post"])
def test_every_url_for_every_role(client, people, world, role_index, role, name):
    _, method, url, data, expected = next(row for row in urls(world) if row[0] == name)
    assert request_as(client, role, method, url, data).status_code == expected[role_index], (role, name)


def test_the_course_address_leads_each_role_to_its_page(client, people, world):
    url = "/courses/attn/"
    assert reverse("courses:home", args=["attn"]) == url
    for username, destination in (("ines", "/teach/attn/"), ("tariq", "/teach/attn/"), ("sam", "/#course-attn")):
        client.login(username=username, password=PASSWORD)
        response = client.get(url)
        assert (response.status_code, response["Location"]) == (302, destination), username
    client.logout()
    assert client.get(url)["Location"] == "/login/?next=/courses/attn/"


def test_the_course_address_does_not_reveal_a_course_to_outsiders(client, people, world):
    client.login(username="otto", password=PASSWORD)
    member_of_none = client.get("/courses/attn/")
    no_such_course = client.get("/courses/no-such-course/")
    assert (member_of_none.status_code, no_such_course.status_code) == (404, 404)
    for response in (member_of_none, no_such_course):
        assert "<p>No such course.</p>" in response.content.decode()
    Enrolment.objects.filter(course=people.course, user=people.student).update(status=EnrolmentStatus.DROPPED)
    client.login(username="sam", password=PASSWORD)
    assert client.get("/courses/attn/").status_code == 404
    client.login(username="ines", password=PASSWORD)
    assert client.post("/courses/attn/").status_code == 405


def test_other_courses_people_are_not_reachable_through_this_course(client, people, world):
    otto = Enrolment.objects.get(course=people.other_course, user=people.outsider)
    client.login(username="ines", password=PASSWORD)
    assert client.post(reverse("courses:person_remove", args=["attn", otto.pk])).status_code == 404
    assert Enrolment.objects.filter(pk=otto.pk).exists()


def test_creating_a_course_from_the_form(client, people, world):
    client.login(username="ines", password=PASSWORD)
    data = {"title": "Attention II", "slug": "attn-2", "term": "Spring", "time_zone": "Europe/Berlin", "description": "More."}
    response = client.post(reverse("courses:new"), data)
    assert response.status_code == 302 and response["Location"] == reverse("courses:settings", args=["attn-2"])
    course = Course.objects.get(slug="attn-2")
    page = client.get(reverse("courses:settings", args=["attn-2"])).content.decode()
    assert f"http://testserver/join/{course.join_code}/" in page
    again = client.post(reverse("courses:new"), {**data, "time_zone": "Nowhere/Land"})
    assert again.status_code == 422
    text = again.content.decode()
    assert "There is already a course called &#x27;attn-2&#x27;; choose another short name." in text
    assert "Select a valid choice" in text


def test_join_settings_close_expire_and_rotate(client, people, world):
    client.login(username="ines", password=PASSWORD)
    url = reverse("courses:join_settings", args=["attn"])
    client.post(url, {"join_expires_at": "2030-01-01T10:00"})
    people.course.refresh_from_db()
    assert (people.course.join_open, people.course.join_expires_at.isoformat()) == (False, "2030-01-01T10:00:00+00:00")
    assert client.post(url, {"join_expires_at": "not a date"}).status_code == 422
    client.post(url, {"rotate": "1"})
    people.course.refresh_from_db()
    assert people.course.join_code != world["code"] and people.course.join_open is True


def test_the_join_link_for_a_visitor_a_member_and_a_bad_code(client, people, world):
    page = client.get(reverse("courses:join", args=[world["code"]])).content.decode()
    assert f'href="/accounts/signup/?join={world["code"]}"' in page
    client.login(username="otto", password=PASSWORD)
    page = client.get(reverse("courses:join", args=[world["code"]])).content.decode()
    assert "Join Attention as a student" in page
    assert Enrolment.objects.filter(course=people.course, user=people.outsider).exists() is False  # GET joins nobody
    client.post(reverse("courses:join", args=[world["code"]]))
    assert Enrolment.objects.get(course=people.course, user=people.outsider).role == Role.STUDENT
    missing = client.get(reverse("courses:join", args=["NOSUCHCODE"]))
    assert missing.status_code == 404 and "There is no course with that code" in missing.content.decode()
    services.join_settings_update(course=people.course, join_open=False, expires_at=None)
    closed = client.post(reverse("courses:join", args=[world["code"]]))
    assert closed.status_code == 403 and "Joining Attention by code is closed" in closed.content.decode()


def test_the_dashboard_box_joins_and_says_why_not(client, people, world):
    client.login(username="otto", password=PASSWORD)
    response = client.post(reverse("courses:join_enter"), {"code": "WRONG"}, follow=True)
    assert "There is no course with that code" in response.content.decode()
    response = client.post(reverse("courses:join_enter"), {"code": world["code"].lower()}, follow=True)
    assert "You are enrolled in Attention." in response.content.decode()
    assert ">Join a course<" in response.content.decode() and "Create a course" in response.content.decode()


def test_people_page_adds_drops_and_refuses_with_messages(client, people, world):
    client.login(username="ines", password=PASSWORD)
    bad = client.post(reverse("courses:person_add", args=["attn"]), {"identifier": "ghost@example.org", "role": "ta"})
    assert bad.status_code == 422 and "No account has confirmed the e-mail &#x27;ghost@example.org&#x27;." in bad.content.decode()
    page = client.post(reverse("courses:person_remove", args=["attn", world["sue"].pk]), follow=True).content.decode()
    assert "Dropped sue: hidden from the gradebook, every submission kept." in page
    assert Enrolment.objects.get(pk=world["sue"].pk).status == EnrolmentStatus.DROPPED
    otto_only = Enrolment.objects.get(course=people.other_course, user=people.outsider)
    client.login(username="otto", password=PASSWORD)
    page = client.post(reverse("courses:person_remove", args=["other", otto_only.pk]), follow=True).content.decode()
    assert "A course needs at least one instructor" in page


def test_roster_page_dry_run_then_apply(client, people, world):
    client.login(username="ines", password=PASSWORD)
    csv = "email,name,role\nnew@example.org,New Person,student\nbad,,\n"
    dry = client.post(reverse("courses:roster", args=["attn"]), {"text": csv})
    text = dry.content.decode()
    assert dry.status_code == 200 and "Dry run: what importing would do" in text and "create: 1 · error: 1" in text
    assert not Enrolment.objects.filter(user__email="new@example.org").exists()
    applied = client.post(reverse("courses:roster", args=["attn"]), {"text": csv, "apply": "1"})
    assert "Imported the roster: 1 change." in applied.content.decode()
    assert Enrolment.objects.get(user__email="new@example.org").course == people.course
    refused = client.post(reverse("courses:roster", args=["attn"]), {"text": "name\nx\n"})
    assert refused.status_code == 422 and "must name the columns" in refused.content.decode()
    empty = client.post(reverse("courses:roster", args=["attn"]), {"text": ""})
    assert empty.status_code == 422 and "Choose a CSV file or paste its lines." in empty.content.decode()
    nul_file = SimpleUploadedFile("roster.csv", b"email,name\nnul@example.org,N\x00L\n", content_type="text/csv")
    nul = client.post(reverse("courses:roster", args=["attn"]), {"file": nul_file, "apply": "1"})
    assert nul.status_code == 422 and "NUL characters" in nul.content.decode()
    assert not Enrolment.objects.filter(user__email="nul@example.org").exists()


def test_copy_page_copies_and_refuses_a_taken_slug(client, people, world):
    client.login(username="ines", password=PASSWORD)
    taken = client.post(reverse("courses:copy", args=["attn"]), {"title": "A", "slug": "other", "offset_days": "7"})
    assert taken.status_code == 422 and "already a course called &#x27;other&#x27;" in taken.content.decode()
    done = client.post(reverse("courses:copy", args=["attn"]), {"title": "A", "slug": "attn-next", "term": "Next", "offset_days": "7", "copy_staff": "on"})
    assert done.status_code == 302
    assert Course.objects.get(slug="attn-next").assignments.count() == 1
    settings_page = client.get(done.url).content.decode()
    assert ("2 members of staff invited: each joins when they accept on their dashboard." in settings_page)


def test_course_pages_read_and_show_dates_in_the_course_time_zone(client, people, world):
    from datetime import datetime, timezone as dt_timezone

    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    client.login(username="ines", password=PASSWORD)
    form = client.get(reverse("instructor:assignment_new", args=["attn"])).content.decode()
    assert "Dates are in Europe/Berlin." in form
    client.post(reverse("instructor:assignment_new", args=["attn"]), {
        "title": "Week 2", "slug": "week2", "due_at": "2027-03-01T09:00", "attempts_per_part": "3",
        "penalty_per_extra_attempt": "0", "late_penalty": "0", "solution_policy": "never",
    })
    due = people.course.assignments.get(slug="week2").due_at
    assert due == datetime(2027, 3, 1, 8, 0, tzinfo=dt_timezone.utc)  # 09:00 in Berlin (CET)
    client.login(username="sam", password=PASSWORD)
    people.course.assignments.filter(slug="week2").update(is_published=True)
    assert "Mon 1 Mar 2027, 09:00" in client.get(reverse("dashboard")).content.decode()
