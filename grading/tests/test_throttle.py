"""The per-student answer rate limit: a burst, then a steady rate; over it, 429 and nothing stored."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.urls import reverse

from exercises.services import variant_create_practice
from grading.models import Submission
from grading.throttle import token_take


class FakeClock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def local_cache(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    yield caches["default"]
    caches["default"].clear()


def test_burst_then_one_per_second(local_cache):
    clock = FakeClock()
    take = lambda: token_take(key="k", burst=10, per_second=1.0, clock=clock)  # noqa: E731
    assert [take() for _ in range(10)] == [0.0] * 10
    assert take() == pytest.approx(1.0)
    clock.now += 0.25
    assert take() == pytest.approx(0.75)  # a refused request takes nothing
    clock.now += 0.75
    assert take() == 0.0
    assert take() == pytest.approx(1.0)
    clock.now += 3.0  # three seconds idle give three tokens back, never more than the burst
    assert [take() for _ in range(4)][:3] == [0.0] * 3


def test_an_idle_bucket_refills_to_the_burst_only(local_cache):
    clock = FakeClock()
    for _ in range(3):
        token_take(key="k", burst=3, per_second=2.0, clock=clock)
    clock.now += 3600
    granted = [token_take(key="k", burst=3, per_second=2.0, clock=clock) for _ in range(4)]
    assert granted[:3] == [0.0] * 3
    assert granted[3] == pytest.approx(0.5)


def test_buckets_are_per_key_and_can_be_switched_off(local_cache):
    clock = FakeClock()
    assert token_take(key="a", burst=1, per_second=1.0, clock=clock) == 0.0
    assert token_take(key="a", burst=1, per_second=1.0, clock=clock) == pytest.approx(1.0)
    assert token_take(key="b", burst=1, per_second=1.0, clock=clock) == 0.0
    assert token_take(key="a", burst=0, per_second=1.0, clock=clock) == 0.0


@pytest.mark.integration
def test_the_redis_bucket_is_one_atomic_script(redis_server, settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_server.url}
    }
    granted = [token_take(key="r", burst=3, per_second=1.0) for _ in range(4)]
    assert granted[:3] == [0.0] * 3
    assert 0.9 < granted[3] <= 1.0
    assert token_take(key="other", burst=3, per_second=1.0) == 0.0


@pytest.fixture
def rate_limited(settings, student):
    settings.SUBMIT_RATE_BURST = 10
    settings.SUBMIT_RATE_PER_SECOND = 1.0
    caches["default"].delete(f"token-bucket:submit:{student.pk}")
    yield
    caches["default"].delete(f"token-bucket:submit:{student.pk}")


def test_graded_and_practice_answers_share_the_limit_and_429_stores_nothing(
    client, rate_limited, variant, student, settings
):
    settings.SUBMIT_RATE_PER_SECOND = 0.05  # one token per 20 s: grading inline takes time
    variant.assignment_item.assignment.attempts_per_part = 0
    variant.assignment_item.assignment.save()
    practice = variant_create_practice(item=variant.assignment_item, student=student, named=None)
    client.force_login(student)

    answers = (f"[0.1, 0.2, 0.3, {0.4 + n / 10_000:.4f}]" for n in range(100))  # the same again: "unchanged"

    def post(target):
        return client.post(
            reverse("submit", args=[target.pk, "weights"]), {"answer": next(answers)},
            HTTP_HX_REQUEST="true",
        )

    statuses = [post(variant).status_code for _ in range(5)] + [post(practice).status_code for _ in range(5)]
    assert statuses == [200] * 10
    refused_practice, refused_graded = post(practice), post(variant)
    assert (refused_practice.status_code, refused_graded.status_code) == (429, 429)
    retry_after = int(refused_graded["Retry-After"])
    assert 1 <= retry_after <= 20
    assert f"You are sending answers too quickly. Wait {retry_after} seconds and send it again" in (
        refused_graded.content.decode()
    )
    assert Submission.objects.filter(student=student).count() == 10


def test_a_plain_form_post_over_the_limit_is_a_429_too(client, rate_limited, variant, student, settings):
    settings.SUBMIT_RATE_BURST = 1
    client.force_login(student)
    url = reverse("submit", args=[variant.pk, "weights"])
    assert client.post(url, {"answer": "[0.1, 0.2, 0.3, 0.4]"}).status_code == 302
    response = client.post(url, {"answer": "[0.1, 0.2, 0.3, 0.4]"})
    assert response.status_code == 429
    assert Submission.objects.count() == 1


def test_with_redis_unreachable_the_bucket_is_kept_in_this_process(settings):
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
    }}
    clock = FakeClock()
    take = lambda: token_take(key="unreachable", burst=2, per_second=1.0, clock=clock)  # noqa: E731
    assert [take(), take()] == [0.0, 0.0]
    assert take() == pytest.approx(1.0)
    clock.now += 1.0
    assert take() == 0.0
