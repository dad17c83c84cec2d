"""Exam access controls: allowed networks (IPv4 and IPv6, checked on every request of the
attempt), the access code (once per attempt, constant-time, throttled), one browser
session per attempt (refuse the second, or the second takes over), and staff previewing
ungated. Every new URL walked for every role."""

from __future__ import annotations

import ipaddress
from datetime import datetime, timezone as dt_timezone

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from api.services import api_token_create
from authoring.tests.factories import (
    PASSWORD, ROLES, assignment_create, people_create, product_yaml, published_version, request_as, variant_for,
)
from courses.models import AssignmentKind, SessionPolicy
from exams import access
from exams.models import AssignmentAttempt
from grading.models import Submission

START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt_timezone.utc)
INSIDE, OUTSIDE = "192.0.2.10", "198.51.100.7"


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def exam(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())], slug="exam1")
    return assignment


@pytest.fixture
def item(exam):
    return exam.items.get()


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: START)
    return START


def controls(assignment, **fields):
    for name, value in fields.items():
        setattr(assignment, name, value)
    assignment.save()
    return assignment


def login(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def exercise(client, item, **extra):
    return client.get(reverse("exercise", args=[item.pk]), **extra)


def submit(client, variant, answer="12", **extra):
    return client.post(reverse("submit", args=[variant.pk, "product"]), {"answer": answer}, **extra)


def code_url(assignment):
    return reverse("exam_access_code", args=[assignment.course.slug, assignment.slug])


# --- Networks: parsing and matching ------------------------------------------------------


@pytest.mark.parametrize(
    "text, networks",
    [
        ("", []),
        ("192.0.2.0/24", ["192.0.2.0/24"]),
        ("10.0.0.0/8\n\n  172.16.0.0/12  \n# the lab\n2001:db8::/32 # campus", ["10.0.0.0/8", "172.16.0.0/12", "2001:db8::/32"]),
        ("192.0.2.7", ["192.0.2.7/32"]),
        ("2001:db8::1", ["2001:db8::1/128"]),
    ],
)
def test_networks_parse_reads_ranges(text, networks):
    parsed, problems = access.networks_parse(text)
    assert (list(map(str, parsed)), problems) == (networks, [])


@pytest.mark.parametrize(
    "text, problem",
    [
        ("10.1.2.3/8", "Line 1, “10.1.2.3/8”: host bits are set (e.g. write 10.0.0.0/8, not 10.1.2.3/8)."),
        ("192.0.2.0/24\n300.0.0.0/8", "Line 2, “300.0.0.0/8”: not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)."),
        ("10.0.0.0/33", "Line 1, “10.0.0.0/33”: not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)."),
        ("2001:db8::/129", "Line 1, “2001:db8::/129”: not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)."),
        ("campus", "Line 1, “campus”: not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)."),
        ("10.0.0.0/8, 11.0.0.0/8", "Line 1, “10.0.0.0/8, 11.0.0.0/8”: not an IPv4 or IPv6 range in CIDR notation (e.g. 192.0.2.0/24 or 2001:db8::/32)."),
    ],
)
def test_networks_parse_names_each_bad_line(text, problem):
    assert access.networks_parse(text)[1] == [problem]


def test_networks_parse_bounds_the_list():
    assert access.networks_parse("10.0.0.0/8\n" * 201) == ([], ["Give at most 200 ranges (found 201 lines)."])


NETWORKS = access.networks_parse("192.0.2.0/24\n10.0.0.0/8\n2001:db8::/32")[0]


@pytest.mark.parametrize(
    "address, allowed",
    [
        ("192.0.2.0", True), ("192.0.2.255", True), ("192.0.3.0", False), ("192.0.1.255", False),
        ("10.255.255.255", True), ("11.0.0.0", False), ("127.0.0.1", False),
        ("2001:db8::1", True), ("2001:db8:ffff:ffff::", True), ("2001:db9::", False), ("::1", False),
        ("::ffff:192.0.2.5", True),  # an IPv4-mapped IPv6 address is its IPv4 address
        ("::ffff:198.51.100.1", False),
    ],
)
def test_address_allowed_table(address, allowed):
    assert access.address_allowed(ipaddress.ip_address(address), NETWORKS) is allowed


def test_no_address_is_never_allowed():
    assert access.address_allowed(None, NETWORKS) is False


@pytest.mark.parametrize(
    "hops, remote, forwarded, expected",
    [
        (0, "192.0.2.10", "", "192.0.2.10"),
        (0, "192.0.2.10", "10.0.0.1", "192.0.2.10"),  # no trusted proxy: the header is ignored
        (1, "172.17.0.2", "10.0.0.1", "10.0.0.1"),
        (1, "172.17.0.2", "10.0.0.1, 198.51.100.7", "198.51.100.7"),  # the client forged the first entry
        (2, "172.17.0.2", "10.0.0.1, 198.51.100.7, 172.17.0.9", "198.51.100.7"),
        (2, "172.17.0.2", "198.51.100.7", None),  # fewer entries than proxies
        (1, "172.17.0.2", "", None),
        (1, "172.17.0.2", "not-an-address", None),
        (0, "", "", None),
    ],
)
def test_client_address(settings, hops, remote, forwarded, expected):
    settings.EXAM_TRUSTED_PROXIES = hops
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    address = access.client_address(request)
    assert (str(address) if address else None) == expected


# --- Networks on every request of the attempt --------------------------------------------


def test_allowed_networks_are_checked_on_every_request_of_the_attempt(people, exam, item):
    controls(exam, allowed_networks="192.0.2.0/24\n2001:db8::/32")
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    client = login("sam")
    assert exercise(client, item, REMOTE_ADDR=INSIDE).status_code == 200
    assert exercise(client, item, REMOTE_ADDR="2001:db8::5").status_code == 200
    refused = exercise(client, item, REMOTE_ADDR=OUTSIDE)
    assert refused.status_code == 403
    assert (
        "This exam can only be taken from the networks its instructor allowed; your address "
        "(198.51.100.7) is not one of them." in refused.content.decode()
    )
    assert submit(client, variant, REMOTE_ADDR=OUTSIDE).status_code == 403
    assert submit(client, variant, REMOTE_ADDR=OUTSIDE, HTTP_HX_REQUEST="true").status_code == 403
    assert not Submission.objects.exists()
    assert client.get(reverse("assignment", args=["attn", "exam1"]), REMOTE_ADDR=OUTSIDE).status_code == 403
    assert client.get(reverse("api:exercise", args=[item.pk]), REMOTE_ADDR=OUTSIDE).status_code == 403
    assert client.post(
        reverse("api:submit", args=[item.pk, "product"]), {"answer": "12"},
        content_type="application/json", REMOTE_ADDR=OUTSIDE,
    ).status_code == 403
    assert submit(client, variant, REMOTE_ADDR=INSIDE).status_code == 302
    submission = Submission.objects.get()
    assert client.get(reverse("submission", args=[submission.pk]), REMOTE_ADDR=INSIDE).status_code == 200
    assert client.get(reverse("submission", args=[submission.pk]), REMOTE_ADDR=OUTSIDE).status_code == 403
    assert client.get(reverse("api:submission", args=[submission.pk]), REMOTE_ADDR=OUTSIDE).status_code == 403
    # Only networks were asked for: no attempt is needed to check them.
    assert not AssignmentAttempt.objects.exists()


def test_an_assignment_without_controls_starts_no_attempt(people, exam, item):
    client = login("sam")
    assert exercise(client, item, REMOTE_ADDR=OUTSIDE).status_code == 200
    assert not AssignmentAttempt.objects.exists()


def test_staff_previewing_are_not_gated(people, exam, item):
    controls(exam, allowed_networks="192.0.2.0/24", access_code="owl-42", session_policy=SessionPolicy.REFUSE_SECOND)
    for username in ("ines", "tariq"):
        client = login(username)
        assert exercise(client, item, REMOTE_ADDR=OUTSIDE).status_code == 200
        assert client.get(reverse("api:exercise", args=[item.pk]), REMOTE_ADDR=OUTSIDE).status_code == 200
        assert client.get(code_url(exam)).status_code == 302
    assert not AssignmentAttempt.objects.exists()


# --- The access code ----------------------------------------------------------------------


@pytest.fixture
def coded(people, exam):
    controls(exam, access_code="owl-42")
    cache.delete(f"token-bucket:exam-code:{exam.pk}:{people.student.pk}")
    return exam


def test_without_the_code_the_page_asks_for_it_and_the_clock_waits(people, coded, item, frozen):
    client = login("sam")
    response = exercise(client, item)
    assert response.status_code == 302
    assert response["Location"] == f"{code_url(coded)}?next=%2Fexercises%2F{item.pk}%2F"
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert '<label for="id_code">Access code</label>' in page.content.decode()
    assert not AssignmentAttempt.objects.exists()


@pytest.mark.parametrize("wrong", ["owl-43", "OWL-42", "owl-4", "owl-42x", " "])
def test_a_wrong_code_is_refused_and_starts_nothing(people, coded, item, wrong):
    client = login("sam")
    response = client.post(code_url(coded), {"code": wrong, "next": f"/exercises/{item.pk}/"})
    assert response.status_code in (403, 422)
    if wrong.strip():
        assert response.status_code == 403
        assert "That is not this exam&#x27;s access code." in response.content.decode()
    assert not AssignmentAttempt.objects.exists()
    assert exercise(client, item).status_code == 302


def test_a_missing_code_is_a_form_error(people, coded):
    response = login("sam").post(code_url(coded), {})
    assert response.status_code == 422
    assert "Enter the access code your invigilator gave out." in response.content.decode()


def test_the_right_code_is_asked_once_and_starts_nothing(people, coded, item, frozen):
    client = login("sam")
    response = client.post(code_url(coded), {"code": "  owl-42 ", "next": f"/exercises/{item.pk}/"})
    assert (response.status_code, response["Location"]) == (302, f"/exercises/{item.pk}/")
    assert not AssignmentAttempt.objects.exists()
    assert exercise(client, item).status_code == 200
    assert exercise(client, item).status_code == 200
    assert client.get(code_url(coded)).status_code == 302  # nothing more to enter
    # Another browser must enter it too.
    assert exercise(login("sam"), item).status_code == 302


def test_an_exams_code_counts_for_the_attempt_it_was_entered_for(people, coded, item, frozen):
    controls(coded, kind=AssignmentKind.EXAM)
    client = login("sam")
    assert client.post(code_url(coded), {"code": "owl-42"}).status_code == 302
    assert not AssignmentAttempt.objects.exists()  # the clock waits for Start
    assert client.post(reverse("exams:start", args=["attn", "exam1"])).status_code == 302
    attempt = AssignmentAttempt.objects.get()
    assert attempt.started_at == START
    assert client.get(reverse("assignment", args=["attn", "exam1"])).status_code == 200
    # A new attempt (the old one removed by an instructor) asks for the code again.
    attempt.delete()
    AssignmentAttempt.objects.create(assignment=coded, student=people.student, started_at=START)
    assert client.get(reverse("assignment", args=["attn", "exam1"])).status_code == 302


def test_the_code_page_does_not_redirect_off_site(people, coded):
    response = login("sam").post(code_url(coded), {"code": "owl-42", "next": "https://evil.example/"})
    assert response["Location"] == reverse("assignment", args=["attn", "exam1"])


def test_wrong_codes_are_throttled(settings, people, coded):
    settings.EXAM_CODE_BURST = 3
    settings.EXAM_CODE_PER_MINUTE = 1.0
    client = login("sam")
    statuses = [client.post(code_url(coded), {"code": "guess"}).status_code for _ in range(4)]
    assert statuses == [403, 403, 403, 429]
    throttled = client.post(code_url(coded), {"code": "owl-42"})
    assert throttled.status_code == 429
    assert 1 <= int(throttled["Retry-After"]) <= 60
    assert "Too many tries. Wait" in throttled.content.decode()
    assert not AssignmentAttempt.objects.exists()


def test_without_the_code_submitting_and_the_api_are_refused(people, coded, item):
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    client = login("sam")
    fragment = submit(client, variant, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 403
    assert "Enter the exam&#x27;s access code first." in fragment.content.decode()
    assert f'href="{code_url(coded)}"' in fragment.content.decode()
    api = client.get(reverse("api:exercise", args=[item.pk]))
    assert (api.status_code, api.json()["detail"]) == (403, "Enter the exam's access code first.")
    assert not Submission.objects.exists()


def test_an_api_token_cannot_open_an_exam_with_a_code(people, coded, item):
    _, secret = api_token_create(user=people.student, name="script", scope="write", lifetime_days=30)
    response = Client().get(reverse("api:exercise", args=[item.pk]), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert (response.status_code, response.json()["detail"]) == (
        403, "This exam is taken in the browser: an API token cannot open it."
    )


def test_compare_is_constant_time_and_of_hashes(monkeypatch, people, coded):
    calls = []
    real = access.constant_time_compare
    monkeypatch.setattr(access, "constant_time_compare", lambda a, b: calls.append((a, b)) or real(a, b))
    login("sam").post(code_url(coded), {"code": "owl-41"})
    coded.refresh_from_db()
    assert calls == [(access.access_code_hash("owl-41"), coded.access_code)]
    assert coded.access_code.startswith("hmac-sha256$") and "owl" not in coded.access_code


def test_a_code_is_stored_hashed_and_never_hashed_twice(people, coded):
    coded.refresh_from_db()
    stored = coded.access_code
    coded.save()
    coded.refresh_from_db()
    assert coded.access_code == stored == access.access_code_hash("owl-42")
    assert access.access_code_matches(stored=stored, given=" owl-42 ")
    assert not access.access_code_matches(stored=stored, given=stored)  # the hash is no code
    assert not access.access_code_matches(stored="", given="")


# --- One browser session per attempt -----------------------------------------------------


def test_refuse_second_keeps_the_first_session(people, exam, item, frozen):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    first, second = login("sam"), login("sam")
    assert exercise(first, item).status_code == 200
    attempt = AssignmentAttempt.objects.get()
    assert (attempt.session_key, attempt.started_at, attempt.last_seen_at) == (
        first.session.session_key, START, START
    )
    refused = exercise(second, item)
    assert refused.status_code == 403
    assert "Your attempt is already open in another browser session; continue there." in refused.content.decode()
    assert exercise(first, item).status_code == 200
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key
    # Another student is not affected.
    assert exercise(login("sue"), item).status_code == 200
    assert AssignmentAttempt.objects.count() == 2


def test_signing_out_frees_a_one_session_attempt_for_another_browser(people, exam, item):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    first, second = login("sam"), login("sam")
    assert exercise(first, item).status_code == 200
    assert exercise(second, item).status_code == 403
    assert first.post(reverse("logout")).status_code == 302
    assert AssignmentAttempt.objects.get().session_key == ""
    assert exercise(second, item).status_code == 200
    assert AssignmentAttempt.objects.get().session_key == second.session.session_key
    assert exercise(login("sam"), item).status_code == 403


def test_second_takes_over_and_the_first_is_refused(people, exam, item):
    controls(exam, session_policy=SessionPolicy.SECOND_TAKES_OVER)
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    first, second = login("sam"), login("sam")
    assert exercise(first, item).status_code == 200
    assert exercise(second, item).status_code == 200
    assert AssignmentAttempt.objects.get().session_key == second.session.session_key
    refused = exercise(first, item)
    assert refused.status_code == 403
    assert "Your attempt was opened in another browser session, which has taken it over" in refused.content.decode()
    assert submit(first, variant).status_code == 403
    assert not Submission.objects.exists()
    assert submit(second, variant).status_code == 302
    assert Submission.objects.count() == 1
    assert exercise(second, item).status_code == 200
    # A third login takes over again.
    third = login("sam")
    assert exercise(third, item).status_code == 200
    assert exercise(second, item).status_code == 403


def test_an_exam_binds_its_session_from_start_on_and_never_starts_it(people, exam, item, frozen):
    controls(exam, kind=AssignmentKind.EXAM, session_policy=SessionPolicy.REFUSE_SECOND)
    first, second = login("sam"), login("sam")
    overview = reverse("assignment", args=["attn", "exam1"])
    assert first.get(overview).status_code == 200
    assert second.get(overview).status_code == 200
    assert not AssignmentAttempt.objects.exists()
    assert first.post(reverse("exams:start", args=["attn", "exam1"])).status_code == 302
    assert first.get(overview).status_code == 200
    attempt = AssignmentAttempt.objects.get()
    assert (attempt.started_at, attempt.session_key) == (START, first.session.session_key)
    assert second.get(overview).status_code == 403
    assert exercise(second, item).status_code == 403
    assert exercise(first, item).status_code == 200


def test_an_existing_attempt_keeps_its_start(people, exam, item, frozen):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    earlier = datetime(2026, 3, 2, 8, 30, tzinfo=dt_timezone.utc)
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=earlier)
    assert exercise(login("sam"), item).status_code == 200
    assert AssignmentAttempt.objects.get().started_at == earlier


# --- The walk ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "role, method, data, expected",
    [
        (role, "get", None, status) for role, status in zip(ROLES, (302, 200, 302, 302, 404))
    ] + [
        (role, "post", {"code": "owl-42"}, status) for role, status in zip(ROLES, (302, 302, 302, 302, 404))
    ] + [
        (role, "post", {"code": "nope"}, status) for role, status in zip(ROLES, (302, 403, 302, 302, 404))
    ],
)
def test_the_access_code_page_for_every_role(client, people, coded, role, method, data, expected):
    assert request_as(client, role, method, code_url(coded), data).status_code == expected


def test_a_student_of_another_course_cannot_reach_the_code_page(client, people, coded):
    from authoring.tests.factories import user_create
    from courses.models import Enrolment, Role

    stranger = user_create("stella")
    Enrolment.objects.create(course=people.other_course, user=stranger, role=Role.STUDENT)
    client.force_login(stranger)
    assert client.get(code_url(coded)).status_code == 404
    assert client.post(code_url(coded), {"code": "owl-42"}).status_code == 404


def test_the_walk_covers_every_access_url():
    from exams.urls_access import urlpatterns

    assert [p.name for p in urlpatterns] == ["exam_access_code", "exam_session_free"]


def free_url():
    return reverse("exam_session_free", args=["attn", "exam1"])


def test_the_invigilator_frees_a_bound_attempt_for_another_browser(people, exam, item):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    first, second = login("sam"), login("sam")
    assert exercise(first, item).status_code == 200
    assert exercise(second, item).status_code == 403
    proctor = login("tariq")
    page = proctor.get(reverse("proctor:view", args=["attn", "exam1"])).content.decode()
    assert f'<option value="{people.student.pk}">sam</option>' in page
    response = proctor.post(free_url(), {"student": people.student.pk})
    assert (response.status_code, response["Location"]) == (302, reverse("proctor:view", args=["attn", "exam1"]))
    assert AssignmentAttempt.objects.get().session_key == ""
    assert exercise(second, item).status_code == 200
    assert exercise(first, item).status_code == 403
    messages = [str(m) for m in proctor.get(response["Location"]).context["messages"]]
    assert "sam's attempt is free: the next browser they use takes it." in messages


@pytest.mark.parametrize("student", ["", "x", "999999"])
def test_freeing_nobody_changes_nothing(people, exam, item, student):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    first = login("sam")
    assert exercise(first, item).status_code == 200
    proctor = login("ines")
    response = proctor.post(free_url(), {"student": student})
    assert response.status_code == 302
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key
    messages = [str(m) for m in proctor.get(response["Location"]).context["messages"]]
    assert "Choose a student whose open attempt is bound to a browser." in messages


@pytest.mark.parametrize("role, expected", list(zip(ROLES, (302, 403, 302, 302, 404))))
def test_the_free_url_for_every_role(client, people, exam, item, role, expected):
    controls(exam, session_policy=SessionPolicy.REFUSE_SECOND)
    assert exercise(login("sam"), item).status_code == 200
    assert request_as(client, role, "post", free_url(), {"student": people.student.pk}).status_code == expected
    assert (AssignmentAttempt.objects.get().session_key == "") is (role in ("ta", "instructor"))
