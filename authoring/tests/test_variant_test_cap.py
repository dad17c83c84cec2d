"""At most two "Test N variants" at once per person: a third answers 429 with a message and
runs nothing, so one author cannot hold the web workers (one held 14 of 16)."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from authoring import services
from authoring.models import VariantTestRun
from authoring.tests.factories import PASSWORD, product_yaml


def variant_test_url(people):
    draft = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml(slug="capped"))
    return reverse("authoring:test", args=[people.course.slug, draft.exercise.slug, draft.number])


def test_a_third_variant_test_at_once_is_refused_with_429(client, people, monkeypatch):
    from authoring import selectors

    url = variant_test_url(people)
    ran = []
    monkeypatch.setattr(selectors, "version_test_variants_limited", lambda **kw: ran.append(kw) or None)
    for _ in range(2):
        services.variant_test_start(user=people.instructor)  # two still running elsewhere
    assert client.login(username=people.instructor.username, password=PASSWORD)
    response = client.post(url, {"first_seed": "0"})
    assert (response.status_code, response["Retry-After"]) == (429, "2")  # the page may try again
    assert "You already have 2 variant tests (or pre-flights) running." in response.content.decode()
    assert ran == []
    # Another person is not affected.
    client.logout()
    assert client.login(username=people.ta.username, password=PASSWORD)
    allowed = client.post(url, {"first_seed": "0"})
    assert (allowed.status_code, allowed.has_header("Retry-After")) == (200, False)
    assert len(ran) == 1 and VariantTestRun.objects.filter(user=people.ta).count() == 0


def test_a_finished_or_abandoned_test_frees_its_place(people):
    first = services.variant_test_start(user=people.instructor)
    services.variant_test_start(user=people.instructor)
    services.variant_test_finish(run=first)
    third = services.variant_test_start(user=people.instructor)
    # A place left by a process that died counts no more after the lease.
    VariantTestRun.objects.filter(pk=third.pk).update(started_at=timezone.now() - timedelta(seconds=91))
    services.variant_test_start(user=people.instructor)
    assert VariantTestRun.objects.filter(user=people.instructor).count() == 2
