"""The instructor's LMS page: linked LMS courses, roster status, and every grade passback
with its state (waiting / sent / failed with the reason), re-sendable."""

from datetime import timedelta

import pytest
from django.utils import timezone

from courses.services import enrolment_ensure
from lti.models import Passback


@pytest.fixture
def instructor(linked, django_user_model):
    teacher = django_user_model.objects.create(username="teacher")
    enrolment_ensure(course=linked.course, user=teacher, role="instructor")
    return teacher


@pytest.fixture
def failed(linked):
    return Passback.objects.create(
        link=linked.link,
        user=linked.student,
        status="failed",
        changed_at=timezone.now() - timedelta(minutes=3),
        attempts=1,
        last_error='service answered 422: {"error": "user not in course"}',
    )


def test_the_page_shows_each_passback_with_its_state_and_reason(client, linked, instructor, failed):
    client.force_login(instructor)
    response = client.get(f"/lti/courses/{linked.course.slug}/")
    assert response.status_code == 200
    assert response.context["counts"] == {"pending": 0, "sent": 0, "failed": 1}
    page = response.content.decode()
    assert "0 waiting, 0 sent, 1 failed." in page
    assert "service answered 422: {&quot;error&quot;: &quot;user not in course&quot;}" in page
    assert 'value="resend"' in page
    assert "Example University LMS" in page


def test_send_again_re_arms_the_row_and_sends_it(
    client, linked, instructor, failed, monkeypatch, django_capture_on_commit_callbacks
):
    from lti import passback

    sent = []
    monkeypatch.setattr(passback, "passbacks_enqueue", lambda *, passback_ids: sent.append(passback_ids))
    client.force_login(instructor)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/lti/courses/{linked.course.slug}/", {"action": "resend", "passback": failed.pk}
        )
    assert response.status_code == 302
    assert sent == [[failed.pk]]
    failed.refresh_from_db()
    assert (failed.status, failed.attempts, failed.last_error) == ("pending", 0, "")


@pytest.mark.parametrize("role", ["student", "ta", None])
def test_only_the_course_instructors_see_the_page(client, linked, django_user_model, role):
    other = django_user_model.objects.create(username="someone")
    if role:
        enrolment_ensure(course=linked.course, user=other, role=role)
    client.force_login(other)
    status = client.get(f"/lti/courses/{linked.course.slug}/").status_code
    assert status == (404 if role is None else 403)


def test_a_row_of_another_course_cannot_be_re_sent(client, linked, instructor, failed):
    from courses.models import Course

    elsewhere = Course.objects.create(slug="elsewhere", title="Elsewhere")
    enrolment_ensure(course=elsewhere, user=instructor, role="instructor")
    client.force_login(instructor)
    response = client.post("/lti/courses/elsewhere/", {"action": "resend", "passback": failed.pk})
    assert response.status_code == 404
    failed.refresh_from_db()
    assert failed.status == "failed"
