"""The picker's and the pool page's previews of published versions: drawn in the sandbox once,
then read from the cache (no sandbox run, no place needed); a miss holds the person's one
place for sandbox runs, as the editor's Check and Preview do. While another run of theirs
holds it, the picker's preview answers 429 with Retry-After and the reason, and the pool
page shows each preview it could not draw as left out, with the reason, not a refused page.
With Redis down every preview is drawn afresh, and shown."""

from __future__ import annotations

import re
import uuid

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from authoring import selectors, services
from authoring.models import SourceCheckRun
from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from exercises.models import VersionStatus
from exercises.services_bank import bank_load
from grading.core import sandbox
from grading.core.sandbox import SandboxLimitExceeded
from grading.harness import free_port
from instructor.selectors_pools import latest_published_by_exercise

RUNNING = ("A check of yours is still running, so this preview was not started: one check, save, import or "
           "preview at a time per person, and each stops after at most 10 s.")
PROMPT = "Multiply $4$ by $7$."  # seed 0 of product_yaml()
SOFTMAX_POOL = ["causal-mask-weights", "heatmap-reading", "softmax-weights-from-scores"]


@pytest.fixture(autouse=True)
def own_cache(settings):
    """The configured cache (Redis in the suite), under a key prefix of this test's own, so
    neither another test nor an earlier run of the suite leaves a preview in it."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}


class Runs(list):
    """Each sandbox run, as the ids of the instructor's places (SourceCheckRun) held during it;
    ``taken``: each take of a place, as (action, how many of the person's were held before)."""

    def __init__(self, hold):
        super().__init__()
        self.taken = []
        self.hold = hold  # take the person's place, as another run of theirs (not recorded)


@pytest.fixture
def runs(monkeypatch, people):
    """Every sandbox run and every take of a place, recorded, then done for real."""
    real_run, real_start = sandbox.run_limited, services.source_check_start
    recorded = Runs(hold=lambda user: real_start(user=user))

    def run(func, **kwargs):
        recorded.append(list(SourceCheckRun.objects.filter(user=people.instructor).values_list("pk", flat=True)))
        return real_run(func, **kwargs)

    def start(*, user, action="check"):
        recorded.taken.append((action, SourceCheckRun.objects.filter(user=user).count()))
        return real_start(user=user, action=action)

    monkeypatch.setattr(sandbox, "run_limited", run)
    monkeypatch.setattr(services, "source_check_start", start)
    return recorded


@pytest.fixture
def instructor(people) -> Client:
    client = Client()
    assert client.login(username="ines", password=PASSWORD)
    return client


@pytest.fixture
def version(people):
    version = published_version(source=product_yaml())
    assignment_create(people.course, [])
    return version


def preview_url(version) -> str:
    return reverse("instructor:exercise_preview", args=["attn", "week1", version.pk])


def prompt_shown(page: str) -> bool:
    return "Multiply" in page and "What a student sees for a sample variant (seed 0)." in page


def busy_notice(page: str) -> str:
    found = re.search(r'<p class="bad aq-preview-busy" role="alert"([^>]*)>(.*?)</p>', page, re.S)
    assert found, "no busy notice"
    return " ".join(found.group(1).split()) + " | " + " ".join(re.sub(r"<[^>]+>", "", found.group(2)).split())


# ---------------------------------------------------------------- the cache


def test_a_second_preview_comes_from_the_cache_without_the_sandbox_or_the_place(instructor, people, version, runs):
    first = instructor.get(preview_url(version), headers={"HX-Request": "true"})
    assert first.status_code == 200 and prompt_shown(first.content.decode())
    assert (len(runs), runs.taken) == (1, [("preview", 0)])
    cached = cache.get(selectors.published_preview_cache_key(version=version, seed=0))
    assert (cached["prompt"], cached["params"], cached["error"]) == (PROMPT + "\n\n**(a)** \n\n**(b)** \n",
                                                                     {"a": "4", "b": "7"}, None)

    # Even while another run of theirs holds the place, a cached preview is shown.
    other = runs.hold(people.instructor)
    for headers in ({"HX-Request": "true"}, {}):
        again = instructor.get(preview_url(version), headers=headers)
        assert again.status_code == 200 and prompt_shown(again.content.decode())
    assert (len(runs), runs.taken) == (1, [("preview", 0)])
    assert list(SourceCheckRun.objects.values_list("pk", flat=True)) == [other.pk]


def test_the_key_names_the_version_its_content_and_the_seed(version):
    assert selectors.published_preview_cache_key(version=version, seed=3) == (
        f"published-preview:4:{version.pk}:{version.content_hash[:16]}:3"
    )


def test_a_miss_holds_the_place_during_the_run_and_gives_it_back(instructor, people, version, runs):
    assert instructor.get(preview_url(version)).status_code == 200
    assert len(runs) == 1 and len(runs[0]) == 1  # one place of the instructor's, during the run
    assert SourceCheckRun.objects.count() == 0


@pytest.mark.parametrize("outcome, shown", [
    (SandboxLimitExceeded("wall-clock limit of 5 s"),
     "Stopped: this exercise needed more than the 5 s (or 512 MB) allowed (wall-clock limit of 5 s). Look for "
     "gates that reject almost every draw, or derived parameters that compute too much."),
    ({"seed": 0, "variant_name": "", "error": "No acceptable variant for seed 0 in 3 draws.", "problems": []},
     "No acceptable variant for seed 0 in 3 draws."),
], ids=["stopped", "draw-failed"])
def test_a_preview_with_an_error_is_not_cached(instructor, version, monkeypatch, outcome, shown):
    calls = []

    def failing(func, **kwargs):
        calls.append(func.__name__)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(sandbox, "run_limited", failing)
    for expected_calls in (1, 2):
        page = instructor.get(preview_url(version), headers={"HX-Request": "true"}).content.decode()
        assert f'<p class="bad" role="alert">The sample variant could not be drawn: {shown}</p>' in page
        assert calls == ["version_preview"] * expected_calls
    assert cache.get(selectors.published_preview_cache_key(version=version, seed=0)) is None


def test_only_published_versions_are_cached(version):
    version.status = VersionStatus.DRAFT
    with pytest.raises(ValueError, match="is not published"):
        selectors.published_version_preview(version=version, seed=0, place=pytest.fail)


def test_with_redis_down_every_preview_is_drawn_and_shown(instructor, version, runs, settings):
    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = {"default": {
        "BACKEND": "django_redis.cache.RedisCache", "LOCATION": dead,
        "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.5},
    }}
    for _ in range(2):
        response = instructor.get(preview_url(version), headers={"HX-Request": "true"})
        assert response.status_code == 200 and prompt_shown(response.content.decode())
    assert (len(runs), runs.taken) == (2, [("preview", 0), ("preview", 0)])
    assert SourceCheckRun.objects.count() == 0


# ---------------------------------------------------------------- the picker, busy


@pytest.mark.parametrize("htmx", [True, False], ids=["row", "page"])
def test_the_pickers_preview_while_a_run_is_held_is_429_with_the_reason(instructor, people, version, runs, htmx):
    other = runs.hold(people.instructor)
    headers = {"HX-Request": "true"} if htmx else {}
    response = instructor.get(preview_url(version), headers=headers)
    assert (response.status_code, response["Retry-After"]) == (429, "2")
    page = response.content.decode()
    assert busy_notice(page) == (
        'data-resend-after="2" data-resend="reload" data-resend-give-up="It is still running: open the preview '
        'again in a moment." | ' + RUNNING + " The preview is drawn in a moment."
    )
    assert ("<html" in page) is not htmx
    assert ("attnquiz/authoring_check.js" in page) is not htmx  # the page reloads itself after the wait
    assert not prompt_shown(page)
    assert (runs, runs.taken) == ([], [("preview", 1)])
    assert cache.get(selectors.published_preview_cache_key(version=version, seed=0)) is None

    other.delete()  # the other run ends: the row's (or the page's) next try draws it
    again = instructor.get(preview_url(version), headers=headers)
    assert again.status_code == 200 and "Retry-After" not in again
    assert prompt_shown(again.content.decode())
    assert (len(runs), SourceCheckRun.objects.count()) == (1, 0)


def test_the_pickers_rows_ask_again_after_a_refusal(instructor, version):
    page = instructor.get(reverse("instructor:exercise_picker", args=["attn", "week1"])).content.decode()
    # Each row asks again on its retry event; the rows' previews are fetched one at a time.
    assert ('hx-trigger="toggle once, aq-preview-retry" hx-sync="#picker-add:queue all" '
            'data-busy-retry="aq-preview-retry"') in page
    assert "attnquiz/authoring_check.js" in page  # which sends the row's event after Retry-After


# ---------------------------------------------------------------- the pool page


@pytest.fixture
def pool_url(people):
    bank_load()
    assignment_create(people.course, [])
    return reverse("instructor:pool_by_skill", args=["attn", "week1"])


SECTION = re.compile(r'<section class="aq-pool-preview" data-exercise="([^"]+)">(.*?)</section>', re.S)
LEFT_OUT = re.compile(r'<p class="bad aq-preview-busy" role="alert">(.*?)</p>', re.S)


def pool_previews(page: str) -> dict[str, str]:
    """Each candidate's preview: its busy notice, or "prompt" when a prompt is shown."""
    shown = {}
    for slug, body in SECTION.findall(page):
        notice = LEFT_OUT.search(body)
        shown[slug] = notice.group(1) if notice else ("prompt" if '<div class="prompt" data-math>' in body else "?")
    return shown


def latest_version(slug: str):
    return next(version for version in latest_published_by_exercise() if version.exercise.slug == slug)


def test_the_pool_page_takes_the_place_for_each_candidates_run_only(instructor, pool_url, runs):
    page = instructor.get(pool_url, {"skill": "softmax", "count": "3"}).content.decode()
    assert pool_previews(page) == dict.fromkeys(SOFTMAX_POOL, "prompt")
    # Three runs, each in a place of its own, taken when none of the person's was held:
    # between two candidates' runs a Check of theirs would have gone through.
    assert [len(held) for held in runs] == [1, 1, 1] and len({held[0] for held in runs}) == 3
    assert runs.taken == [("preview", 0)] * 3
    assert SourceCheckRun.objects.count() == 0

    again = instructor.get(pool_url, {"skill": "softmax", "count": "3"}).content.decode()
    assert pool_previews(again) == dict.fromkeys(SOFTMAX_POOL, "prompt")
    assert (len(runs), len(runs.taken)) == (3, 3)  # all from the cache


def test_the_pool_page_while_a_run_is_held_leaves_out_the_previews_it_cannot_draw(
    instructor, people, pool_url, runs
):
    # The first candidate's preview is cached already (another instructor looked at it).
    selectors.published_version_preview(
        version=latest_version(SOFTMAX_POOL[0]), seed=0,
        place=lambda: services.source_check_place(user=people.reviewer, action="preview"),
    )
    assert len(runs) == 1

    other = runs.hold(people.instructor)
    response = instructor.get(pool_url, {"skill": "softmax", "count": "3"})
    assert response.status_code == 200 and "Retry-After" not in response
    page = response.content.decode()
    left_out = RUNNING + " Press Preview again in a moment to see it."
    assert pool_previews(page) == {SOFTMAX_POOL[0]: "prompt", SOFTMAX_POOL[1]: left_out, SOFTMAX_POOL[2]: left_out}
    assert page.count('name="version"') == 3  # the pool can still be added
    assert (len(runs), runs.taken[1:]) == (1, [("preview", 1), ("preview", 1)])
    assert list(SourceCheckRun.objects.values_list("pk", flat=True)) == [other.pk]

    other.delete()
    page = instructor.get(pool_url, {"skill": "softmax", "count": "3"}).content.decode()
    assert pool_previews(page) == dict.fromkeys(SOFTMAX_POOL, "prompt")
    assert len(runs) == 3



def test_a_published_versions_page_draws_its_seed_0_once_then_reads_the_cache(instructor, people, version, runs):
    url = reverse("authoring:version", args=[people.course.slug, version.exercise.slug, version.number])
    assert "<h3>Seed 0</h3>" in instructor.get(url).content.decode()
    assert (len(runs), runs.taken) == (1, [("preview", 0)])
    # The picker's row reads what the version page drew, and the page reads it again even
    # while another run of the instructor's holds the place.
    assert prompt_shown(instructor.get(preview_url(version)).content.decode())
    runs.hold(people.instructor)
    assert "<h3>Seed 0</h3>" in instructor.get(url).content.decode()
    assert (len(runs), runs.taken) == (1, [("preview", 0)])
