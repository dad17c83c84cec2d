"""What a walk through the hand-grading pages by an instructor and a TA at once found (round
4): anonymous grading hides the students' names on the manual queue and its grading page
too, a question's list of answers shows who has each one open, a rubric item applied to
many answers releases the applier's claims of them, the score's help text is the element
its input names for screen readers, and the queue's claim note no longer wraps into an oval."""

import html
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from authoring.tests.factories import PASSWORD
from grading.models import SubmissionStatus
from instructor import claims
from instructor.models import Rubric
from instructor.tests.test_rubric_grading import answer_url, essays, question_url  # noqa: F401 (fixture)


@pytest.fixture
def graders(people, essays):
    """Ines (instructor) and tariq (TA) signed in, no claim on any essay before or after."""
    people.instructor.first_name = "Ines"
    people.instructor.save(update_fields=["first_name"])
    claim_keys = [claims.claim_key(submission) for submission in essays["submissions"]]
    caches["default"].delete_many(claim_keys)  # the cache is shared Redis, kept between runs
    ines, tariq = Client(), Client()
    assert ines.login(username="ines", password=PASSWORD) and tariq.login(username="tariq", password=PASSWORD)
    yield ines, tariq
    caches["default"].delete_many(claim_keys)


def _page(response, status: int = 200) -> str:
    assert response.status_code == status
    return html.unescape(response.content.decode())


def _queue_url(query: str = "") -> str:
    return reverse("instructor:manual_queue", args=["attn"]) + query


def _manual_grade_url(submission) -> str:
    return reverse("instructor:manual_grade", args=["attn", submission.pk])


def _holder(submission):
    claim = claims.answer_claims_held(submissions=[submission]).get(submission.pk)
    return claim and claim.grader_name


STUDENTS = ("sam", "sue", "ann", "bob", "cat")


def test_anonymous_grading_hides_the_names_on_the_manual_queue_and_its_grading_page(graders, essays):
    """Before: the queue and /manual/<id>/ showed every username with anonymous mode on."""
    _ines, tariq = graders
    first = essays["submissions"][0]
    named = _page(tariq.get(_queue_url()))
    assert [f"<td>{name}</td>" in named for name in STUDENTS] == [True] * 5
    assert '<a href="?anonymous=1" id="anonymous-toggle">Grade anonymously (hide names)</a>' in named

    hidden = _page(tariq.get(_queue_url("?anonymous=1")))
    assert [f"<td>{name}</td>" in hidden for name in STUDENTS] == [False] * 5
    assert hidden.count('<td><span class="muted">hidden</span></td>') == 5
    assert '<a href="?anonymous=0" id="anonymous-toggle">Show names</a> <span class="status">anonymous</span>' in hidden
    # Kept in the session, and the toggle keeps "include graded" on.
    assert '<a href="?all=1&anonymous=0" id="anonymous-toggle">Show names</a>' in _page(tariq.get(_queue_url("?all=1")))

    grade_page = _page(tariq.get(_manual_grade_url(first)))
    assert '<p><span class="status">anonymous</span> · ' in grade_page
    assert "<p>sam · " not in grade_page

    assert "<td>sam</td>" in _page(tariq.get(_queue_url("?anonymous=0")))
    assert "<p>sam · " in _page(tariq.get(_manual_grade_url(first)))


def test_anonymous_mode_set_on_a_questions_page_holds_on_the_manual_queue(graders, essays):
    _ines, tariq = graders
    assert "anonymous" in _page(tariq.get(question_url(essays["item"], "?anonymous=1")))
    queue = _page(tariq.get(_queue_url()))
    assert queue.count('<td><span class="muted">hidden</span></td>') == 5
    answer = _page(tariq.get(answer_url(essays["item"], essays["submissions"][0])))
    assert (
        f'<a href="{answer_url(essays["item"], essays["submissions"][0])}?anonymous=0" id="anonymous-toggle">'
        'Show names</a> <span class="status">anonymous</span>'
    ) in answer


def test_a_questions_answers_show_who_has_each_one_open(graders, essays):
    """Before: only the manual queue showed claims; the question's list, where a rubric
    grader picks answers, did not."""
    ines, tariq = graders
    item, (first, second) = essays["item"], essays["submissions"][:2]
    tariq.get(question_url(item))  # makes the course rubric
    ines.get(answer_url(item, first))

    page = _page(tariq.get(question_url(item)))
    assert (
        f'<span class="status">waiting</span> <span class="aq-claim" id="claim-{first.pk}">'
        "Ines opened it less than a minute ago</span>"
    ) in page
    assert f'id="claim-{second.pk}"' not in page
    assert (
        f'<span class="aq-claim" id="claim-{first.pk}">you opened it less than a minute ago</span>'
    ) in _page(ines.get(question_url(item)))


def test_applying_a_rubric_item_releases_the_appliers_claims_only(graders, essays):
    """Before: the answers graded by "Apply rubric item" stayed claimed by the grader for ten
    minutes ("you opened it" on graded answers)."""
    ines, tariq = graders
    item, (first, second, third) = essays["item"], essays["submissions"][:3]
    ines.get(question_url(item))
    big, _small = Rubric.objects.get().items.all()
    ines.get(answer_url(item, first))
    ines.get(answer_url(item, second))
    tariq.get(answer_url(item, third))
    assert (_holder(first), _holder(second), _holder(third)) == ("Ines", "Ines", "tariq")

    applied = ines.post(
        reverse("instructor:grading_apply", args=["attn", item.pk, "why"]),
        {"item": str(big.pk), "answers": [str(first.pk), str(second.pk), str(third.pk)]},
    )
    assert applied.status_code == 302
    assert "Applied “mentions that the dot product's variance grows with d_k” to 3 answers." in _page(
        ines.get(applied["Location"])
    )
    for submission in (first, second, third):
        submission.refresh_from_db()
        assert submission.status == SubmissionStatus.GRADED
    # Hers are released; tariq still has his page open, so his claim stays.
    assert (_holder(first), _holder(second), _holder(third)) == (None, None, "tariq")


def test_the_score_help_text_is_the_element_its_input_names(graders, essays):
    """Before: the input said aria-describedby="id_score_helptext" and no element had that id."""
    _ines, tariq = graders
    page = _page(tariq.get(_manual_grade_url(essays["submissions"][0])))
    assert 'aria-describedby="id_score_helptext"' in page
    assert '<span class="muted" id="id_score_helptext">Fraction 0–1. Leave empty to score by the ticked criteria.</span>' in page


def test_the_queues_claim_note_is_a_box_of_its_own_line_not_a_pill():
    """The note keeps the badge class .status (a 999px pill, which wrapped into an oval in
    the narrow "#" column, at 360 px and on a desktop): the house stylesheet overrides it."""
    css = (Path(settings.BASE_DIR) / "static" / "attnquiz" / "attnquiz.css").read_text()
    assert '#manual-queue [id^="claim-"], .aq-claim {\n  display: block; width: fit-content; max-width: 100%;' in css
    assert "border-radius: 0.4rem;" in css.split('#manual-queue [id^="claim-"], .aq-claim {', 1)[1].split("}", 1)[0]
