"""The review settings page for every role, its form with good and hostile input, and the
dashboard's "Due for review" block."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, ROLE_USERS, assignment_create, people_create, product_yaml, published_version, user_create,
)
from courses.models import Enrolment, Role
from exercises.services import variant_create_practice
from exercises.specs import part_label, version_spec
from review.models import ReviewCard, ReviewSettings
from review.services import review_settings_update

# anonymous, student, TA, instructor, instructor of another course, student of another course
ROLES = ("anonymous", "student", "ta", "instructor", "outsider", "other_student")
USERS = {**ROLE_USERS, "other_student": "olga"}


@pytest.fixture
def people(db):
    people = people_create()
    olga = user_create("olga")
    Enrolment.objects.create(course=people.other_course, user=olga, role=Role.STUDENT)
    people.week1 = assignment_create(people.course, [published_version(source=product_yaml())])
    people.foreign = assignment_create(
        people.other_course, [published_version(source=product_yaml(slug="product-2"))], slug="theirs"
    )
    return people


def request_as(client, role, method, url, data=None):
    if role in USERS:
        client.login(username=USERS[role], password=PASSWORD)
    response = getattr(client, method)(url, data or {})
    if role == "anonymous" and response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
    return response


URLS = [
    ("settings", "get", None, (302, 403, 200, 200, 404, 404)),
    ("settings", "post", {"enabled": "on"}, (302, 403, 403, 302, 404, 404)),
]


def test_the_walk_covers_every_url_of_the_app():
    from review.urls import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted({name for name, *_ in URLS})


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name,method,data,expected", URLS)
def test_every_url_for_every_role(client, people, role_index, role, name, method, data, expected):
    url = reverse(f"review:{name}", args=["attn"])
    assert request_as(client, role, method, url, data).status_code == expected[role_index], (role, method)


def test_the_instructor_turns_review_off_and_chooses_the_assignments(client, people):
    client.login(username="ines", password=PASSWORD)
    url = reverse("review:settings", args=["attn"])
    page = client.get(url).content.decode()
    assert "Practice never counts toward grades." in page
    assert '<label for="id_enabled">Spaced review on:</label>' in page
    assert '<input type="checkbox" name="enabled" aria-describedby="id_enabled_helptext" id="id_enabled" checked>' in page
    assert '<span class="muted" id="id_enabled_helptext">' in page
    assert "Week1" in page and "Theirs" not in page  # only the course's own assignments
    response = client.post(url, {"feeding_assignments": [people.week1.pk]})
    assert response.status_code == 302 and response["Location"] == url
    stored = ReviewSettings.objects.get(course=people.course)
    assert stored.enabled is False
    assert list(stored.feeding_assignments.all()) == [people.week1]


@pytest.mark.parametrize(
    "choice,message",
    [
        ("999999", "Select a valid choice. 999999 is not one of the available choices."),
        ("not-a-number", "“not-a-number” is not a valid value."),
        ("0x1", "“0x1” is not a valid value."),
    ],
)
def test_hostile_assignment_choices_are_a_form_error(client, people, choice, message):
    client.login(username="ines", password=PASSWORD)
    response = client.post(reverse("review:settings", args=["attn"]), {"enabled": "on", "feeding_assignments": [choice]})
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not ReviewSettings.objects.exists()


def test_another_courses_assignment_cannot_feed_this_course(client, people):
    client.login(username="ines", password=PASSWORD)
    response = client.post(
        reverse("review:settings", args=["attn"]), {"enabled": "on", "feeding_assignments": [people.foreign.pk]}
    )
    assert response.status_code == 422
    assert f"Select a valid choice. {people.foreign.pk} is not one of the available choices." in response.content.decode()
    assert not ReviewSettings.objects.exists()


def test_the_ta_reads_the_settings_without_a_form(client, people):
    review_settings_update(course=people.course, enabled=True, feeding_assignments=[people.week1])
    client.login(username="tariq", password=PASSWORD)
    page = client.get(reverse("review:settings", args=["attn"])).content.decode()
    assert "<form method=\"post\" class=\"card\"" not in page
    assert "<td>on</td>" in page and "<td>Week1</td>" in page


def test_the_course_pages_link_to_the_review_settings(client, people):
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("courses:settings", args=["attn"])).content.decode()
    assert f'href="{reverse("review:settings", args=["attn"])}"' in page


# --------------------------------------------------------------------------- dashboard


@pytest.fixture
def due_card(answer, item, student):
    practice = variant_create_practice(item=item, student=student)
    answer(practice, "slip")
    card = ReviewCard.objects.get(student=student)
    ReviewCard.objects.filter(pk=card.pk).update(due_at="2000-01-01T00:00:00Z")
    return card


def test_a_due_part_offers_a_fresh_practice_variant(client, demo, student, item, due_card):
    client.force_login(student)
    page = client.get(reverse("dashboard")).content.decode()
    assert "Due for review" in page
    assert f'action="{reverse("practice_start", args=[item.pk])}"' in page
    label = part_label(version_spec(item.exercise_version), "weights")
    assert label.startswith("(")  # "(b)": the part as people name it, not its key
    assert f'aria-label="Review now: Attention weights and context vector for one query, part {label}"' in page
    before = set(student.variants.values_list("pk", flat=True))
    response = client.post(reverse("practice_start", args=[item.pk]))
    new = student.variants.exclude(pk__in=before).get()
    assert response["Location"] == reverse("practice", args=[new.pk])
    assert new.context.startswith(f"practice:{item.pk}:") and new.assignment_item_id is None


def test_with_review_off_the_dashboard_shows_no_review_block(client, demo, student, due_card):
    review_settings_update(course=demo.course, enabled=False, feeding_assignments=[])
    client.force_login(student)
    page = client.get(reverse("dashboard")).content.decode()
    assert "Due for review" not in page


def test_a_part_not_due_yet_is_not_shown(client, demo, student, answer, item):
    answer(variant_create_practice(item=item, student=student), "slip")  # due tomorrow
    client.force_login(student)
    assert "Due for review" not in client.get(reverse("dashboard")).content.decode()


def test_staff_see_no_review_block(client, demo, due_card, django_user_model):
    client.force_login(django_user_model.objects.get(username="instructor"))
    assert "Due for review" not in client.get(reverse("dashboard")).content.decode()
