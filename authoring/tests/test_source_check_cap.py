"""One "Check" at a time per person: a teaching assistant could keep the shared checkers busy
with sources that take ~10 s each to check. A second check of the same person while the first
runs answers 429 with a message and runs nothing; other people's checks are not affected."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from authoring import selectors, services
from authoring.models import SourceCheckRun, VariantTestRun
from authoring.tests.factories import PASSWORD, product_yaml

BUSY = "A check of yours is still running, so this one was not started"
WAIT = 20  # seconds any step may take before the test fails instead of hanging


def check_url(people) -> str:
    return reverse("authoring:check", args=[people.course.slug])


def logged_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def post_check(client, url, replies, name):
    try:
        replies[name] = client.post(url, {"source": product_yaml(), "seed": "0"})
    finally:
        connection.close()  # this thread's own connection, or the test database cannot be dropped


class SlowCheck:
    """``selectors.source_check`` that stays running until the test lets it end."""

    def __init__(self, *, running_together: int = 1):
        self.started = threading.Semaphore(0)
        self.release = threading.Event()
        self.together = threading.Barrier(running_together, timeout=WAIT)
        self.calls = 0

    def __call__(self, *, source, seed):
        self.calls += 1
        self.started.release()
        self.together.wait()  # with several: they are all inside at once, or this times out
        assert self.release.wait(WAIT)
        return {"errors": [], "failure": None, "problems": [], "preview": {"seed": seed, "error": "held"}}


@pytest.mark.django_db(transaction=True)
def test_a_second_check_of_the_same_person_while_one_runs_is_refused_with_429(people, monkeypatch):
    slow = SlowCheck()
    monkeypatch.setattr(selectors, "source_check", slow)
    url, replies = check_url(people), {}
    first = threading.Thread(target=post_check, args=(logged_in(people.ta), url, replies, "first"))
    first.start()
    assert slow.started.acquire(timeout=WAIT)
    post_check(logged_in(people.ta), url, replies, "second")  # another tab of the same person
    slow.release.set()
    first.join(WAIT)

    assert replies["first"].status_code == 200
    refused = replies["second"]
    assert refused.status_code == 429
    assert refused["Retry-After"] == "2"
    assert f'<p class="bad" role="alert" id="check-busy">{BUSY}: one check at a time per person, and each ' \
           "stops after at most 10 s. The editor checks your latest text again in a moment.</p>" in refused.content.decode()
    assert slow.calls == 1  # the refused one ran nothing
    assert SourceCheckRun.objects.count() == 0  # the finished check gave its place back
    assert logged_in(people.ta).post(url, {"source": product_yaml(), "seed": "0"}).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_two_people_check_at_the_same_time(people, monkeypatch):
    slow = SlowCheck(running_together=2)
    monkeypatch.setattr(selectors, "source_check", slow)
    url, replies = check_url(people), {}
    threads = [threading.Thread(target=post_check, args=(logged_in(user), url, replies, user.username))
               for user in (people.ta, people.instructor)]
    for thread in threads:
        thread.start()
    for _ in threads:
        assert slow.started.acquire(timeout=WAIT)
    slow.release.set()
    for thread in threads:
        thread.join(WAIT)
    assert {name: reply.status_code for name, reply in replies.items()} == {people.ta.username: 200,
                                                                          people.instructor.username: 200}
    assert slow.calls == 2


def test_the_place_is_given_back_when_the_check_fails(client, people, monkeypatch):
    def crashes(**kwargs):
        raise RuntimeError("the checker broke")

    monkeypatch.setattr(selectors, "source_check", crashes)
    client.raise_request_exception = False
    assert client.login(username=people.ta.username, password=PASSWORD)
    assert client.post(check_url(people), {"source": product_yaml()}).status_code == 500
    assert SourceCheckRun.objects.count() == 0


def test_a_place_left_by_a_process_that_died_counts_no_more_after_the_lease(people):
    services.source_check_start(user=people.ta)
    with pytest.raises(services.AuthoringRefused) as refused:
        services.source_check_start(user=people.ta)
    assert refused.value.code == "busy"
    SourceCheckRun.objects.update(started_at=timezone.now() - timedelta(seconds=31))
    run = services.source_check_start(user=people.ta)
    assert list(SourceCheckRun.objects.values_list("pk", flat=True)) == [run.pk]


def test_a_real_check_runs_under_the_sandbox_limits(client, people, monkeypatch):
    """The per-check budget: the check itself runs in a checker process with CPU and
    wall-clock limits (8 s CPU, 10 s in all), not in the web thread."""
    from grading.core import sandbox

    seen = []
    real = sandbox.run_limited
    monkeypatch.setattr(sandbox, "run_limited", lambda func, **kw: seen.append(
        {k: kw[k] for k in ("cpu_seconds", "wall_seconds", "memory_mb")}) or real(func, **kw))
    assert client.login(username=people.ta.username, password=PASSWORD)
    response = client.post(check_url(people), {"source": product_yaml(), "seed": "0"})
    assert response.status_code == 200 and 'id="check-ok"' in response.content.decode()
    assert seen == [{"cpu_seconds": 8.0, "wall_seconds": 10.0, "memory_mb": 512}]


def test_a_preflight_takes_a_variant_test_place(client, people, monkeypatch):
    draft = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml(slug="spread"))
    url = reverse("authoring:preflight", args=[people.course.slug, draft.exercise.slug, draft.number])
    ran = []
    monkeypatch.setattr(selectors, "version_variant_spread_limited", lambda **kw: ran.append(kw) or None)
    for _ in range(2):
        services.variant_test_start(user=people.ta)  # two still running elsewhere
    assert client.login(username=people.ta.username, password=PASSWORD)
    response = client.post(url)
    assert (response.status_code, response["Retry-After"]) == (429, "2")  # the page may try again
    assert "You already have 2 variant tests (or pre-flights) running." in response.content.decode()
    assert ran == []
    VariantTestRun.objects.all().delete()
    allowed = client.post(url)
    assert (allowed.status_code, allowed.has_header("Retry-After")) == (200, False)
    assert len(ran) == 1 and VariantTestRun.objects.count() == 0
