"""Claims of answers being graded by hand (instructor.claims): a grader who opens an answer
holds it for ten minutes, the others are told and their "next waiting" passes it over, a
saved grade releases it, and a failing cache means no claims, never a failed page."""

import html

import pytest
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from authoring.tests.factories import PASSWORD, submission_add
from grading.models import SubmissionStatus
from instructor import claims
from instructor.models import ManualGrade, Rubric
from instructor.tests.test_rubric_grading import answer_url, essays, question_url  # noqa: F401 (fixture)

NOTICE = "Ines opened this answer {ago} and may be grading it."


@pytest.fixture
def graders(people, essays, clock):
    """Ines (instructor) and tariq (TA) signed in, no claim on any essay before or after."""
    people.instructor.first_name = "Ines"
    people.instructor.save(update_fields=["first_name"])
    claim_keys = [claims.claim_key(submission) for submission in essays["submissions"]]
    caches["default"].delete_many(claim_keys)  # the cache is shared Redis, kept between runs
    ines, tariq = Client(), Client()
    assert ines.login(username="ines", password=PASSWORD) and tariq.login(username="tariq", password=PASSWORD)
    yield ines, tariq
    caches["default"].delete_many(claim_keys)


def _page(response) -> str:
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _next_waiting_url(page: str) -> str:
    return page.split('id="next-waiting" href="', 1)[1].split('"', 1)[0]


def manual_grade_url(submission) -> str:
    return reverse("instructor:manual_grade", args=["attn", submission.pk])


def manual_queue_url() -> str:
    return reverse("instructor:manual_queue", args=["attn"])


class CacheDown:
    """A cache whose every call fails, as Redis does in an outage without fail-open."""

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise ConnectionError("Redis is down")
        return fail


def test_the_second_grader_is_told_who_opened_the_answer_and_may_still_grade_it(graders, essays, clock):
    ines, tariq = graders
    item, first = essays["item"], essays["submissions"][0]
    ines.get(question_url(item))  # makes the course rubric
    assert "may be grading it" not in _page(ines.get(answer_url(item, first)))

    clock.advance(minutes=2)
    page = _page(tariq.get(answer_url(item, first)))
    assert NOTICE.format(ago="2 minutes ago") in page
    assert 'id="rubric-grade-form"' in page  # told, not locked out
    # Reopening her own answer renews ines's claim (from now) and tells her of no one.
    assert "may be grading it" not in _page(ines.get(answer_url(item, first)))
    clock.advance(seconds=59)
    assert NOTICE.format(ago="less than a minute ago") in _page(tariq.get(answer_url(item, first)))
    clock.advance(seconds=1)
    assert NOTICE.format(ago="1 minute ago") in _page(tariq.get(answer_url(item, first)))

    big, _small = Rubric.objects.get().items.all()
    saved = tariq.post(answer_url(item, first), {"items": [str(big.pk)], "grade_seen": "0"})
    assert saved.status_code == 302
    first.refresh_from_db()
    assert (first.status, first.score) == (SubmissionStatus.GRADED, pytest.approx(2 / 3))
    assert ManualGrade.objects.get(submission=first).grader.username == "tariq"


def test_the_manual_grade_page_and_the_queue_show_the_claim(graders, essays, clock):
    ines, tariq = graders
    first, second = essays["submissions"][:2]
    assert "may be grading it" not in _page(ines.get(manual_grade_url(first)))
    clock.advance(minutes=3)

    assert NOTICE.format(ago="3 minutes ago") in _page(tariq.get(manual_grade_url(first)))
    queue = _page(tariq.get(manual_queue_url()))
    assert f'<span class="status" id="claim-{first.pk}">Ines opened it 3 minutes ago</span>' in queue
    assert f'id="claim-{second.pk}"' not in queue
    # Ines sees her own claim as hers.
    assert f'<span class="status" id="claim-{first.pk}">you opened it 3 minutes ago</span>' in _page(
        ines.get(manual_queue_url())
    )


def test_the_queue_shows_the_claim_of_the_answer_a_row_links_to(graders, essays):
    """Under the course rubric an earlier attempt, graded, links to the student's newest
    answer: its row shows who has that answer open."""
    ines, tariq = graders
    item, earlier = essays["item"], essays["submissions"][0]
    tariq.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    assert ines.post(answer_url(item, earlier), {"items": [str(big.pk)], "grade_seen": "0"}).status_code == 302
    newest = submission_add(earlier.variant, "why", "sam again", awarded=None, status=SubmissionStatus.MANUAL)
    try:
        tariq.get(answer_url(item, newest))
        queue = _page(ines.get(manual_queue_url() + "?all=1"))
        for row in (earlier, newest):
            assert f'<span class="status" id="claim-{row.pk}">tariq opened it less than a minute ago</span>' in queue
    finally:
        caches["default"].delete(claims.claim_key(newest))


def _holder(submission):
    """The username of who holds the answer's claim, or None."""
    claim = claims.answer_claims_held(submissions=[submission]).get(submission.pk)
    return claim and claim.grader_name


def test_saving_a_grade_releases_the_graders_claim_only(graders, essays, clock):
    ines, tariq = graders
    item, (first, second, third) = essays["item"], essays["submissions"][:3]
    ines.get(manual_grade_url(first))
    tariq.get(manual_grade_url(second))
    assert (_holder(first), _holder(second)) == ("Ines", "tariq")

    # Ines grading the answer tariq has open leaves his claim: he still has the page open
    # (and saving there, he would be shown her grade first: the 409).
    assert ines.post(manual_grade_url(second), {"score": "0.5", "grade_seen": "0"}).status_code == 302
    assert _holder(second) == "tariq"
    # Her own answer, saved, is no longer claimed: tariq opens it without a notice.
    assert ines.post(manual_grade_url(first), {"score": "1", "grade_seen": "0"}).status_code == 302
    assert _holder(first) is None
    assert "may be grading it" not in _page(tariq.get(manual_grade_url(first)))

    # A refused save keeps the claim; a saved one on the rubric's page releases it too.
    ines.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    ines.get(answer_url(item, third))
    assert ines.post(answer_url(item, third), {"items": ["999999"], "grade_seen": "0"}).status_code == 422
    assert _holder(third) == "Ines"
    assert ines.post(answer_url(item, third), {"items": [str(big.pk)], "grade_seen": "0"}).status_code == 302
    assert _holder(third) is None


def test_next_waiting_passes_over_an_answer_another_grader_has_open(graders, essays, clock):
    ines, tariq = graders
    item, submissions = essays["item"], essays["submissions"]
    tariq.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    ines.get(answer_url(item, submissions[0]))

    # Tariq's "next waiting" is the second answer; ines's own claim does not hide it from her.
    assert _next_waiting_url(_page(tariq.get(question_url(item)))) == answer_url(item, submissions[1])
    assert _next_waiting_url(_page(ines.get(question_url(item)))) == answer_url(item, submissions[0])
    # From the last answer it wraps round past the first, claimed, to the second.
    page = _page(tariq.get(answer_url(item, submissions[4])))
    assert _next_waiting_url(page) == answer_url(item, submissions[1])
    saved = tariq.post(answer_url(item, submissions[4]), {"items": [str(big.pk)], "grade_seen": "0"})
    assert saved.status_code == 302 and saved["Location"] == answer_url(item, submissions[1])

    # Answers open by others are still offered once nothing unclaimed waits.
    for submission in submissions[1:4]:
        ines.get(answer_url(item, submission))
    assert _next_waiting_url(_page(tariq.get(question_url(item)))) == answer_url(item, submissions[0])
    # Ines saving the first releases it, and it is no longer waiting: the next is the second, hers.
    saved = ines.post(answer_url(item, submissions[0]), {"items": [str(big.pk)], "grade_seen": "0"})
    assert saved.status_code == 302
    assert _next_waiting_url(_page(tariq.get(question_url(item)))) == answer_url(item, submissions[1])


def test_a_claim_lasts_ten_minutes_from_the_last_opening(graders, essays, clock, monkeypatch):
    ines, tariq = graders
    first = essays["submissions"][0]
    backend = type(caches["default"])
    timeouts = []
    for method in ("add", "set"):
        original = getattr(backend, method)

        def spy(self, key, *args, _original=original, _method=method, **kwargs):
            if str(key).startswith("grading-claim:"):
                timeouts.append((_method, kwargs.get("timeout")))
            return _original(self, key, *args, **kwargs)

        monkeypatch.setattr(backend, method, spy)

    ines.get(manual_grade_url(first))  # claims
    clock.advance(minutes=9, seconds=59)
    ines.get(manual_grade_url(first))  # renews, from now
    assert timeouts == [("add", 600), ("add", 600), ("set", 600)]
    assert claims.CLAIM_SECONDS == 600

    clock.advance(minutes=9, seconds=59)
    assert NOTICE.format(ago="9 minutes ago") in _page(tariq.get(manual_grade_url(first)))
    # Ten minutes after ines last opened it the claim is over, even were the cache to keep
    # it: tariq opens it without a notice, and holds it from then.
    clock.advance(seconds=1)
    assert "may be grading it" not in _page(tariq.get(manual_grade_url(first)))
    assert _holder(first) == "tariq"
    assert "tariq opened this answer less than a minute ago" in _page(ines.get(manual_grade_url(first)))


def test_a_failing_cache_means_no_claims_and_grading_goes_on(graders, essays, monkeypatch):
    ines, tariq = graders
    item, (first, second) = essays["item"], essays["submissions"][:2]
    ines.get(manual_grade_url(second))  # a claim made before the cache failed
    monkeypatch.setattr(claims, "cache", CacheDown())

    assert "may be grading it" not in _page(ines.get(manual_grade_url(first)))
    assert "may be grading it" not in _page(tariq.get(manual_grade_url(second)))
    assert "opened it" not in _page(tariq.get(manual_queue_url()))
    assert tariq.post(manual_grade_url(first), {"score": "1", "grade_seen": "0"}).status_code == 302
    first.refresh_from_db()
    assert (first.status, first.score) == (SubmissionStatus.GRADED, 1.0)

    ines.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    page = _page(ines.get(answer_url(item, second)))
    assert _next_waiting_url(page) == answer_url(item, essays["submissions"][2])
    saved = ines.post(answer_url(item, second), {"items": [str(big.pk)], "grade_seen": "0"})
    assert saved.status_code == 302 and saved["Location"] == answer_url(item, essays["submissions"][2])
    second.refresh_from_db()
    assert (second.status, second.score) == (SubmissionStatus.GRADED, pytest.approx(2 / 3))
    # The 409 is still there between the two graders.
    late = tariq.post(answer_url(item, second), {"items": [], "grade_seen": "0"})
    assert late.status_code == 409 and "ines graded this answer" in html.unescape(late.content.decode())
