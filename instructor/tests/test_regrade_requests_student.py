"""A student asks for another look at a graded answer, checked or graded by a person, from
under the answer on its exercise page or from /grades/; the staff reply (a checked answer's
new score going through the manual-grade service); the student reads the reply and whether
the grade changed, on both pages and in the API. Refusals are 4xx with their message;
messages and replies are escaped wherever they are shown."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.models import TokenScope
from api.services import api_token_create
from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from courses.models import ReleaseMoment
from courses.services import course_archive
from exercises.services import variant_create_practice
from grading.models import Submission, SubmissionStatus
from grading.services import submission_grade
from instructor import services_rubrics
from instructor.models import ManualGrade, RegradeOutcome, RegradeRequest, RegradeRequestStatus

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def graded(variant, part, raw_answer):
    """Store and grade an answer the way the pipeline does (inline)."""
    attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
    submission = Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=attempt
    )
    return submission_grade(submission_id=submission.pk)


@pytest.fixture
def released(people):
    """sam's two checked answers to 'product' (3 × 4): 11 then 13, both wrong (score 0), on
    homework whose verdict and score show when released — and they were released."""
    assignment = assignment_create(
        people.course, [published_version(source=product_yaml())],
        show_correctness=ReleaseMoment.ON_RELEASE, show_score=ReleaseMoment.ON_RELEASE,
        grades_released_at=timezone.now() - timedelta(hours=1),
    )
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"a": 3, "b": 4})
    first = graded(variant, "product", "11")
    answer = graded(variant, "product", "13")
    assert (answer.status, answer.attempt, answer.score, answer.awarded) == ("graded", 2, 0.0, 0.0)
    return {"assignment": assignment, "item": item, "variant": variant, "first": first, "answer": answer}


def as_user(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def ask_url(submission) -> str:
    return reverse("grades:regrade_request", args=[submission.pk])


def exercise_page(client, item) -> str:
    return client.get(reverse("exercise", args=[item.pk])).content.decode()


def box_of(page: str, submission) -> str | None:
    """The regrade block under one answer, None when the page has none."""
    found = re.search(rf'<div class="regrade" id="regrade-{submission.pk}" data-regrade>(.*?)\n</div>', page, re.S)
    return None if found is None else found[1]


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def states(fragment: str) -> list[str]:
    return [html.unescape(s) for s in re.findall(r"<strong class=\"regrade-state\" data-regrade-state>(.*?)</strong>", fragment)]


def reply_url(request) -> str:
    return reverse("instructor:regrade_request_reply", args=["attn", request.pk])


def api(user, method: str, url: str, body=None):
    secret = api_token_create(user=user, name=f"t{timezone.now().timestamp()}", scope=TokenScope.WRITE, lifetime_days=7)[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    if method == "get":
        return client.get(url)
    return client.generic(method.upper(), url, json.dumps(body or {}), content_type="application/json")


# --- The form where the policy allows asking ---------------------------------------------


def test_the_exercise_page_offers_the_form_under_each_released_checked_answer(people, released):
    page = exercise_page(as_user("sam"), released["item"])
    for submission in (released["first"], released["answer"]):
        box = box_of(page, submission)
        assert box is not None, submission.attempt
        assert f'action="{ask_url(submission)}"' in box
        assert '<input type="hidden" name="back" value="exercise">' in box
        assert 'name="message" rows="3" cols="50" maxlength="2000" required' in box
        assert "<summary>Ask for another look</summary>" in box
        assert page.count(f'action="{ask_url(submission)}"') == 1
    # The newest answer's form is under its result, after the verdict.
    result = page.split('id="result-product"', 1)[1]
    assert result.index("Not correct") < result.index(f'id="regrade-{released["answer"].pk}"')


def test_a_fully_right_answer_has_no_form_unless_it_was_asked_about(people, released):
    right = graded(released["variant"], "product", "12")
    assert (right.correct, right.score, right.awarded) == (True, 1.0, 1.0)
    page = exercise_page(as_user("sam"), released["item"])
    assert box_of(page, right) is None
    assert box_of(page, released["answer"]) is not None  # the wrong ones keep theirs
    RegradeRequest.objects.create(submission=right, student=people.student, message="Why only now?")
    assert box_of(exercise_page(as_user("sam"), released["item"]), right) is not None


def test_a_right_answer_a_late_penalty_reduced_keeps_its_form(people, released):
    right = graded(released["variant"], "product", "12")
    Submission.objects.filter(pk=right.pk).update(awarded=0.8)
    assert box_of(exercise_page(as_user("sam"), released["item"]), right) is not None


def test_the_form_waits_for_the_release(people, released):
    assignment = released["assignment"]
    assignment.grades_released_at = None
    assignment.save()
    client = as_user("sam")
    page = exercise_page(client, released["item"])
    assert "data-regrade" not in page and "Ask for another look" not in page
    response = client.post(ask_url(released["answer"]), {"message": "Please look"})
    assert response.status_code == 403
    assert "does not show this answer&#x27;s grade yet" in response.content.decode()
    assert RegradeRequest.objects.count() == 0


@pytest.mark.parametrize("correctness, score, score_shown", [
    (ReleaseMoment.DURING, ReleaseMoment.NEVER, False),  # the verdict alone
    (ReleaseMoment.NEVER, ReleaseMoment.DURING, True),  # the score alone
])
def test_a_verdict_or_a_score_alone_is_enough_to_ask(people, released, correctness, score, score_shown):
    assignment = released["assignment"]
    assignment.show_correctness, assignment.show_score = correctness, score
    assignment.save()
    client = as_user("sam")
    assert box_of(exercise_page(client, released["item"]), released["answer"]) is not None
    assert client.post(ask_url(released["answer"]), {"message": "Why 0?"}).status_code == 302
    request = RegradeRequest.objects.get()
    services_rubrics.regrade_request_reply(request=request, replier=people.ta, reply="Now 1.", score=1.0)
    data = api(people.student, "get", f"/api/v1/submissions/{released['answer'].pk}/regrade-requests/").json()
    assert [(r["outcome"], r["reply"]) for r in data] == [("changed" if score_shown else "answered", "Now 1.")]
    assert (data[0]["score_before"], data[0]["score_after"]) == ((0.0, 1.0) if score_shown else (None, None))
    box = box_of(exercise_page(client, released["item"]), released["answer"])
    assert ("awarded 0% before, 100% now" in text_of(box)) is score_shown
    assert states(box) == ["Answered: the grade changed" if score_shown else "Answered"]


@pytest.mark.parametrize("score", [1.0, None])  # a new score, or the grade kept
def test_with_the_score_hidden_the_outcome_does_not_say_whether_the_grade_changed(people, released, score):
    """show_score=never, the verdict shown: the student reads "Answered" and the reply on both
    pages and "answered" in the API, whether or not the reply changed the score."""
    assignment = released["assignment"]
    assignment.show_correctness, assignment.show_score = ReleaseMoment.DURING, ReleaseMoment.NEVER
    assignment.save()
    answer = released["answer"]
    client = as_user("sam")
    assert client.post(ask_url(answer), {"message": "Why 0?"}).status_code == 302
    request = RegradeRequest.objects.get()
    services_rubrics.regrade_request_reply(request=request, replier=people.ta, reply="Looked again.", score=score)
    request.refresh_from_db()
    assert request.outcome == (RegradeOutcome.CHANGED if score is not None else RegradeOutcome.ANSWERED)

    box = box_of(exercise_page(client, released["item"]), answer)
    assert states(box) == ["Answered"]
    assert re.findall(r'data-regrade-request="([^"]*)"', box) == ["answered"]
    assert "changed" not in box and "stands" not in box and "awarded" not in text_of(box)
    assert '<blockquote class="regrade-reply" data-regrade-reply>Looked again.</blockquote>' in box
    mine = client.get(reverse("grades:mine")).content.decode()
    card = re.search(rf'<section class="card" id="graded-{answer.pk}">(.*?)</section>', mine, re.S)[1]
    assert states(card) == ["Answered"] and "Looked again." in card
    assert "changed" not in card and "stands" not in card
    data = api(people.student, "get", f"/api/v1/submissions/{answer.pk}/regrade-requests/").json()
    assert [(r["status"], r["outcome"], r["reply"], r["score_before"], r["score_after"]) for r in data] == [
        ("answered", "answered", "Looked again.", None, None)
    ]
    # The staff still read what happened.
    listing = as_user("tariq").get(reverse("instructor:regrade_requests", args=["attn"]), {"all": "1"})
    assert ("Answered: the grade changed" if score is not None else "Answered: the grade stands") in listing.content.decode()


# --- Ask, reply, read ---------------------------------------------------------------------


def test_ask_from_the_exercise_page_reply_with_a_score_and_read_it_everywhere(people, released):
    answer, item = released["answer"], released["item"]
    client = as_user("sam")
    response = client.post(ask_url(answer), {"message": "  13 is 3 + 4 + 6: I misread the sign.  ", "back": "exercise"})
    assert response.status_code == 302
    assert response["Location"] == reverse("exercise", args=[item.pk]) + f"#regrade-{answer.pk}"
    request = RegradeRequest.objects.get()
    assert (request.submission_id, request.student_id, request.message, request.status, request.score_before) == (
        answer.pk, people.student.pk, "13 is 3 + 4 + 6: I misread the sign.", RegradeRequestStatus.OPEN, 0.0
    )
    box = box_of(exercise_page(client, item), answer)
    assert states(box) == ["Waiting for a reply"]
    assert "13 is 3 + 4 + 6: I misread the sign." in box and "data-regrade-form" not in box
    # A second request about it waits for the reply.
    again = client.post(ask_url(answer), {"message": "Any news?"})
    assert again.status_code == 409 and "You already asked about this answer; wait for the reply." in again.content.decode()
    assert RegradeRequest.objects.count() == 1

    mine = client.get(reverse("grades:mine")).content.decode()
    card = re.search(rf'<section class="card" id="graded-{answer.pk}">(.*?)</section>', mine, re.S)[1]
    assert text_of(card).startswith("Week1 · Product of two numbers (a) Score 0% Graded by the checker · attempt 2")
    assert states(card) == ["Waiting for a reply"]

    # The staff see it where they did, with a score field: the part is checked.
    staff = as_user("tariq")
    home = staff.get(reverse("instructor:grading", args=["attn"])).content.decode()
    assert '<span class="status">1 open</span>' in home
    listing = staff.get(reverse("instructor:regrade_requests", args=["attn"])).content.decode()
    assert "13 is 3 + 4 + 6: I misread the sign." in listing
    assert f'id="score-{request.pk}" name="score"' in listing
    assert f'href="{reverse("instructor:submission", args=["attn", answer.pk])}"' in listing
    response = staff.post(reply_url(request), {"reply": "Half marks: the method is right.", "score": "50"})
    assert response.status_code == 302

    request.refresh_from_db()
    answer.refresh_from_db()
    grade = ManualGrade.objects.get(submission=answer)
    assert (grade.grader_id, grade.score, grade.previous_score) == (people.ta.pk, 0.5, 0.0)
    assert (answer.score, answer.awarded, answer.feedback["details"]["manual"]) == (0.5, 0.5, True)
    assert (request.status, request.reply, request.replied_by_id, request.score_before, request.score_after) == (
        RegradeRequestStatus.ANSWERED, "Half marks: the method is right.", people.ta.pk, 0.0, 0.5
    )
    assert request.outcome == RegradeOutcome.CHANGED

    box = box_of(exercise_page(client, item), answer)
    assert states(box) == ["Answered: the grade changed"]
    assert "Reply from tariq on" in text_of(box) and "awarded 0% before, 50% now" in text_of(box)
    assert '<blockquote class="regrade-reply" data-regrade-reply>Half marks: the method is right.</blockquote>' in box
    assert "data-regrade-form" in box  # answered: they may ask again
    mine = client.get(reverse("grades:mine")).content.decode()
    assert "Half marks: the method is right." in mine and states(mine) == ["Answered: the grade changed"]
    data = api(people.student, "get", f"/api/v1/submissions/{answer.pk}/regrade-requests/").json()
    assert [(r["status"], r["outcome"], r["reply"], r["replied_by"], r["score_before"], r["score_after"])
            for r in data] == [("answered", "changed", "Half marks: the method is right.", "tariq", 0.0, 0.5)]
    # Answered: a second reply is refused, on the page too.
    twice = staff.post(reply_url(request), {"reply": "Again"})
    assert twice.status_code == 409 and "This request was already answered." in twice.content.decode()


def test_a_reply_without_a_score_keeps_the_grade(people, released):
    answer = released["answer"]
    client = as_user("sam")
    client.post(ask_url(answer), {"message": "Is 13 not close?"})
    request = RegradeRequest.objects.get()
    response = as_user("ines").post(reply_url(request), {"reply": "It is 12: the grade stands.", "score": ""})
    assert response.status_code == 302
    request.refresh_from_db()
    assert (request.status, request.score_after, request.outcome) == ("answered", 0.0, RegradeOutcome.ANSWERED)
    assert ManualGrade.objects.count() == 0
    box = box_of(exercise_page(client, released["item"]), answer)
    assert states(box) == ["Answered: the grade stands"] and "awarded" not in text_of(box)
    assert "It is 12: the grade stands." in box


def test_the_same_score_in_a_reply_is_no_new_grade(people, released):
    client = as_user("sam")
    client.post(ask_url(released["answer"]), {"message": "Look?"})
    request = RegradeRequest.objects.get()
    assert as_user("tariq").post(reply_url(request), {"reply": "Still 0.", "score": "0"}).status_code == 302
    request.refresh_from_db()
    assert (request.outcome, ManualGrade.objects.count()) == (RegradeOutcome.ANSWERED, 0)


@pytest.mark.parametrize("body, status, message", [
    ({"reply": ""}, 400, "Write a reply for the student."),
    ({"reply": "ok", "score": "150"}, 400, "Ensure this value is less than or equal to 100."),
    ({"reply": "ok", "score": "nan"}, 400, "Enter a number."),
    ({"reply": "x" * 5001}, 400, "Ensure this value has at most 5000 characters (it has 5001)."),
])
def test_a_reply_refused_saves_nothing(people, released, body, status, message):
    as_user("sam").post(ask_url(released["answer"]), {"message": "Look?"})
    request = RegradeRequest.objects.get()
    response = as_user("tariq").post(reply_url(request), body)
    assert response.status_code == status
    page = response.content.decode()
    assert re.search(r'<p class="invalid" role="alert" data-reply-refusal>(.*?)</p>', page)[1] == html.escape(message)
    if body.get("score"):  # what was typed comes back in the request's form
        assert f'maxlength="5000" required>{body["reply"]}</textarea>' in page
        assert f'value="{body["score"]}"' in page
    request.refresh_from_db()
    assert (request.status, ManualGrade.objects.count()) == ("open", 0)


def test_a_rubric_graded_answer_is_graded_with_its_rubric_not_by_the_reply(people):
    item = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay").items.get()
    answer = submission_add(variant_for(item, people.student, params={"d": 64}), "why", "Variance.",
                            awarded=None, status=SubmissionStatus.MANUAL)
    rubric = services_rubrics.rubric_for_part(course=people.course, item=item, part="why", seed_criteria=[("x", 1)])
    services_rubrics.submission_grade_with_rubric(submission=answer, rubric=rubric, grader=people.ta, item_ids=[])
    as_user("sam").post(ask_url(answer), {"message": "I named the variance."})
    request = RegradeRequest.objects.get()
    staff = as_user("tariq")
    listing = staff.get(reverse("instructor:regrade_requests", args=["attn"])).content.decode()
    assert f'id="score-{request.pk}"' not in listing and "grade it again with the rubric" in listing
    response = staff.post(reply_url(request), {"reply": "Yes.", "score": "100"})
    assert response.status_code == 400
    assert "grade it again with the rubric (Grade by question), then reply" in response.content.decode()
    request.refresh_from_db()
    assert request.status == "open" and ManualGrade.objects.filter(submission=answer).count() == 1


# --- Who may ask about what ---------------------------------------------------------------


def _hidden(people, released):
    released["assignment"].grades_released_at = None
    released["assignment"].save()
    return released["answer"]


def _others(people, released):
    variant = variant_for(released["item"], people.student2, params={"a": 3, "b": 4})
    return graded(variant, "product", "12")


def _archived(people, released):
    course_archive(course=people.course)
    return released["answer"]


def _pending(people, released):
    return Submission.objects.create(
        variant=released["variant"], student=people.student, part="total", raw_answer="7", attempt=1
    )


def _practice(people, released):
    variant = variant_create_practice(item=released["item"], student=people.student)
    return graded(variant, "product", "1")


def _open(people, released):
    services_rubrics.regrade_request_create(submission=released["answer"], student=people.student, message="First")
    return released["answer"]


def _own(people, released):
    return released["answer"]


@pytest.mark.parametrize("state, body, status, message", [
    (_others, {"message": "Look at hers"}, 404, ""),
    (_hidden, {"message": "Too early"}, 403,
     "Your instructor's review policy does not show this answer's grade yet; you can ask about it once it does."),
    (_archived, {"message": "Late"}, 409, "This course is archived: its grades stay as they are."),
    (_pending, {"message": "Grade it"}, 409, "This answer has no grade yet."),
    (_practice, {"message": "Practice"}, 400, "A practice answer never counts toward your grades"),
    (_open, {"message": "Second"}, 409, "You already asked about this answer; wait for the reply."),
    (_own, {"message": "   "}, 400, "Say what should be looked at again."),
    (_own, {}, 400, "Say what should be looked at again."),
    (_own, {"message": "x" * 2001}, 400, "Keep the request under 2,000 characters."),
    (_own, {"message": "nul \x00 inside"}, 400, "The request may not contain NUL characters."),
])
def test_refusals_on_the_page(people, released, state, body, status, message):
    submission = state(people, released)
    before = RegradeRequest.objects.count()
    response = as_user("sam").post(ask_url(submission), body)
    assert response.status_code == status
    if message:
        page = html.unescape(response.content.decode())
        assert re.search(r'<p class="invalid" role="alert" data-regrade-refusal>(.*?)</p>', page)[1].startswith(message)
    assert RegradeRequest.objects.count() == before


@pytest.mark.parametrize("state, status, message", [
    (_others, 404, ""),
    (_hidden, 403, "does not show this answer's grade yet"),
    (_archived, 409, "archived"),
    (_pending, 409, "This answer has no grade yet."),
    (_practice, 400, "A practice answer never counts"),
    (_open, 409, "You already asked"),
])
def test_refusals_in_the_api(people, released, state, status, message):
    submission = state(people, released)
    before = RegradeRequest.objects.count()
    response = api(people.student, "post", f"/api/v1/submissions/{submission.pk}/regrade-requests/", {"message": "?"})
    assert response.status_code == status, response.content
    assert message in response.json()["detail"]
    assert RegradeRequest.objects.count() == before


def test_another_students_requests_are_not_theirs_to_read(people, released):
    services_rubrics.regrade_request_create(submission=released["answer"], student=people.student, message="Mine")
    assert api(people.student2, "get", f"/api/v1/submissions/{released['answer'].pk}/regrade-requests/").status_code == 404
    sue = as_user("sue")
    assert "Mine" not in sue.get(reverse("grades:mine")).content.decode()
    # sue's own page of the exercise: her own variant, no box of sam's answer
    assert box_of(exercise_page(sue, released["item"]), released["answer"]) is None


def test_the_archived_course_says_why_instead_of_the_form(people, released):
    course_archive(course=people.course)
    box = box_of(exercise_page(as_user("sam"), released["item"]), released["answer"])
    assert "data-regrade-form" not in box
    assert '<p class="aq-note">This course is archived: its grades stay as they are.</p>' in box


def test_staff_reply_is_refused_in_an_archived_course(people, released):
    request = services_rubrics.regrade_request_create(submission=released["answer"], student=people.student, message="?")
    course_archive(course=people.course)
    with pytest.raises(services_rubrics.InstructorRefused, match="archived"):
        services_rubrics.regrade_request_reply(request=request, replier=people.ta, reply="No", score=1.0)
    request.refresh_from_db()
    assert request.status == "open" and ManualGrade.objects.count() == 0


# --- Hostile words -------------------------------------------------------------------------


def test_a_hostile_message_and_reply_stay_inert_on_every_page(people, released):
    answer = released["answer"]
    client = as_user("sam")
    assert client.post(ask_url(answer), {"message": HOSTILE}).status_code == 302
    request = RegradeRequest.objects.get()
    assert request.message == HOSTILE  # stored as typed, escaped where shown
    staff = as_user("tariq")
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    listing = staff.get(reverse("instructor:regrade_requests", args=["attn"])).content.decode()
    assert escaped in listing and "<script>alert" not in listing and "<img src=x" not in listing
    assert staff.post(reply_url(request), {"reply": HOSTILE + "\nsecond line"}).status_code == 302
    for page in (exercise_page(client, released["item"]), client.get(reverse("grades:mine")).content.decode(),
                 staff.get(reverse("instructor:regrade_requests", args=["attn"]) + "?all=1").content.decode()):
        assert page.count(escaped) == 2  # the message and the reply
        assert "<script>alert" not in page and "<img src=x" not in page and "onerror=alert(1)>" not in page
        assert escaped + "<br>second line" in page


# --- /grades/ ---------------------------------------------------------------------------------


def test_the_grades_page_lists_hand_graded_and_asked_about_answers_only(people, released):
    client = as_user("sam")
    page = client.get(reverse("grades:mine")).content.decode()
    assert "<h1>Your graded answers and requests</h1>" in page
    assert "<title>Your graded answers and requests" in page
    assert ('<p id="no-graded-answers">Nothing here yet: no answer of yours graded by a person can be shown (a '
            "grade appears here once the assignment's review policy shows it), and you have not asked about "
            "any.</p>") in page
    assert '<a href="/grades/">Graded answers</a>' in page  # the header leads here
    client.post(ask_url(released["first"]), {"message": "The first one?"})
    page = client.get(reverse("grades:mine")).content.decode()
    assert re.findall(r'<section class="card" id="graded-(\d+)">', page) == [str(released["first"].pk)]
    assert 'action="%s"' % ask_url(released["first"]) not in page  # its request is open


def test_asking_from_the_grades_page_comes_back_to_it(people, released):
    response = as_user("sam").post(ask_url(released["answer"]), {"message": "Look"})
    assert response["Location"] == reverse("grades:mine") + f"#graded-{released['answer'].pk}"


def test_a_refused_message_is_put_back_in_its_box(people, released):
    request = services_rubrics.regrade_request_create(
        submission=released["first"], student=people.student, message="Old"
    )
    services_rubrics.regrade_request_reply(request=request, replier=people.ta, reply="No.")
    typed = "<b>now</b>" + "x" * 1995  # 2,005 characters: one request too long
    response = as_user("sam").post(ask_url(released["first"]), {"message": typed})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Keep the request under 2,000 characters." in page
    box = box_of(page, released["first"])
    assert f'required>&lt;b&gt;now&lt;/b&gt;{"x" * 1990}</textarea>' in box  # as typed, escaped, within the limit
    assert RegradeRequest.objects.count() == 1
