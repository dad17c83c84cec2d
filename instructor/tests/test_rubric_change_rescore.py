"""A change of a rubric's items scores every answer graded with it again, after asking with
the numbers: an item added, given other points or removed once 15 answers were graded out
of 5 points. Nothing changes until the question's token comes back for the same change with
the same numbers; then each answer's score follows its ticked items under the new rubric,
in one transaction, with a new grade in its history that says why. Typed scores and
answers graded since with a typed score stay as they are."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from attnquiz.confirmations import EXPIRED_NOTICE
from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, user_create, variant_for,
)
from courses.models import Enrolment, Role
from grading.models import SubmissionStatus
from instructor import services, services_rubrics
from instructor.models import ManualGrade, ManualGradeKind, RubricItem
from instructor.services import ConfirmationNeeded

# Five patterns of ticks, three answers each: earned points 3, 4, 5, 1, 1 of 5.
PATTERNS = (("A", "C"), ("A", "B"), ("A", "B", "C"), ("B", "D"), ("C",))
QUESTION_ADD = (
    "15 answers were graded with this rubric, out of 5 points; with “TA item” (+100) they are scored out of 105: "
    "15 scores change (e.g. 100% → 4.8%). Students see the new scores at once. Each new score is kept in the "
    "answer's grading history; answers given a typed score are not changed."
)


@pytest.fixture
def graded(people):
    """Rubric A +2, B +2, C +1, D −1 (out of 5); 15 students' answers graded with it in the
    order of PATTERNS (sam first: A and C, 0.6); one answer with a typed score of 0.5 and
    one still waiting. The part is worth 0.25 points."""
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    item = assignment.items.get()
    item.points = 0.25
    item.save(update_fields=["points"])
    rubric = services_rubrics.rubric_create(
        course=people.course, item=item, part="why", criteria=[("A", 2), ("B", 2), ("C", 1), ("D", -1)]
    )
    by_text = {rubric_item.text: rubric_item for rubric_item in rubric.items.all()}
    students = [people.student, people.student2]
    for number in range(3, 18):
        user = user_create(f"s{number:02d}")
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
        students.append(user)
    answers = [
        submission_add(variant_for(item, student, params={"d": 64}, seed=seed), "why", f"answer {seed}",
                       awarded=None, status=SubmissionStatus.MANUAL)
        for seed, student in enumerate(students, start=1)
    ]
    for index, answer in enumerate(answers[:15]):
        services_rubrics.submission_grade_with_rubric(
            submission=answer, rubric=rubric, grader=people.ta, comment=f"note {index}",
            item_ids=[by_text[text].pk for text in PATTERNS[index // 3]],
        )
    typed = answers[15]
    services.submission_grade_manually(submission=typed, grader=people.instructor, score=0.5, comment="typed")
    for answer in answers:
        answer.refresh_from_db()
    return {
        "item": item, "rubric": rubric, "items": by_text, "answers": answers[:15], "typed": typed,
        "waiting": answers[16],
    }


def rubric_url(item) -> str:
    return reverse("instructor:grading_rubric", args=["attn", item.pk, "why"])


def question_url(item) -> str:
    return reverse("instructor:grading_question", args=["attn", item.pk, "why"])


def scores(answers) -> list[float]:
    for answer in answers:
        answer.refresh_from_db()
    return [round(answer.score, 6) for answer in answers]


def grade_count() -> int:
    return ManualGrade.objects.count()


def token_of(page: str) -> str:
    return re.search(r'name="impact" value="([^"]+)"', page).group(1)


def question_of(page: str) -> str:
    found = re.search(r'id="rubric-confirmation" role="alert">.*?<p><strong>.*?</strong> (.*?)</p>', page, re.S)
    return unescape(found.group(1))


def ask(call):
    with pytest.raises(ConfirmationNeeded) as needed:
        call(False)
    return needed.value


# --- Adding an item ------------------------------------------------------------------------


def test_a_ta_adding_an_item_is_asked_with_the_numbers_and_nothing_changes(client, people, graded):
    before, grades = scores(graded["answers"]), grade_count()
    client.login(username="tariq", password=PASSWORD)
    response = client.post(rubric_url(graded["item"]), {"text": "TA item", "points": "100"})
    assert response.status_code == 200
    page = response.content.decode()
    assert question_of(page) == QUESTION_ADD
    assert "Nothing is changed yet." in page
    assert 'name="confirm" value="yes">Add the item and score the answers again' in page
    # The confirm button posts the same change again.
    assert '<input type="hidden" name="text" value="TA item">' in page
    assert '<input type="hidden" name="points" value="100">' in page
    assert graded["rubric"].items.count() == 4
    assert scores(graded["answers"]) == before and grade_count() == grades


def test_confirming_the_added_item_scores_every_graded_answer_again(client, people, graded):
    client.login(username="tariq", password=PASSWORD)
    asked = client.post(rubric_url(graded["item"]), {"text": "TA item", "points": "100"}).content.decode()
    grades = grade_count()
    response = client.post(
        rubric_url(graded["item"]), {"text": "TA item", "points": "100", "confirm": "yes", "impact": token_of(asked)}
    )
    assert response.status_code == 302
    assert list(graded["rubric"].items.values_list("text", "points")) == [
        ("A", 2), ("B", 2), ("C", 1), ("D", -1), ("TA item", 100),
    ]
    earned = [3, 4, 5, 1, 1]
    assert scores(graded["answers"]) == [round(earned[index // 3] / 105, 6) for index in range(15)]
    sam = graded["answers"][0]
    assert (sam.score, sam.awarded) == (pytest.approx(3 / 105), pytest.approx(3 / 105))
    assert sam.feedback["rubric"] == [{"text": "A", "points": 2.0}, {"text": "C", "points": 1.0}]
    assert sam.feedback["grader_comment"] == "note 0"  # the answer keeps its comment
    assert grade_count() == grades + 15
    newest = sam.manual_grades.order_by("-created_at", "-id").first()
    assert (newest.kind, newest.grader, newest.previous_score, newest.score) == (
        ManualGradeKind.BY_HAND, people.ta, pytest.approx(0.6), pytest.approx(3 / 105)
    )
    assert newest.reason == (
        "Scored again from its ticked items when the rubric changed (“TA item” (+100) added): "
        "out of 105 points, was 5."
    )
    assert (newest.rubric, newest.rubric_maximum) == (graded["rubric"], 105)
    assert newest.rubric_ticked == [
        {"id": graded["items"]["A"].pk, "text": "A", "points": 2.0},
        {"id": graded["items"]["C"].pk, "text": "C", "points": 1.0},
    ]
    assert sorted(newest.rubric_items.values_list("text", flat=True)) == ["A", "C"]
    first = sam.manual_grades.order_by("created_at", "id").first()
    assert (first.score, first.rubric_maximum, first.reason) == (pytest.approx(0.6), 5, "")
    # The typed score and the waiting answer are not touched.
    typed, waiting = graded["typed"], graded["waiting"]
    typed.refresh_from_db()
    waiting.refresh_from_db()
    assert (typed.score, typed.manual_grades.count()) == (0.5, 1)
    assert (waiting.status, waiting.manual_grades.count()) == (SubmissionStatus.MANUAL, 0)


def test_after_the_change_every_answer_reads_on_the_same_scale(client, people, graded):
    """The walk's steps: re-saving one answer with the same ticks changes nothing now."""
    services_rubrics.rubric_item_add(rubric=graded["rubric"], text="TA item", points=100, actor=people.ta)
    sam = graded["answers"][0]
    services_rubrics.submission_grade_with_rubric(
        submission=sam, rubric=graded["rubric"], grader=people.ta,
        item_ids=[graded["items"]["A"].pk, graded["items"]["C"].pk],
    )
    assert scores(graded["answers"])[:4] == [round(3 / 105, 6)] * 3 + [round(4 / 105, 6)]


def test_an_item_that_changes_no_score_is_added_without_asking(people, graded):
    """A deduction nobody ticked leaves the scale and every score as they are."""
    before, grades = scores(graded["answers"]), grade_count()
    services_rubrics.rubric_item_add(rubric=graded["rubric"], text="Off topic", points=-1, actor=people.ta, confirmed=False)
    assert graded["rubric"].items.filter(text="Off topic").exists()
    assert scores(graded["answers"]) == before and grade_count() == grades


def test_a_rubric_nobody_was_graded_with_changes_at_once(people):
    version = published_version(source=FREE_TEXT_YAML)
    item = assignment_create(people.course, [version], slug="fresh").items.get()
    rubric = services_rubrics.rubric_create(course=people.course, item=item, part="why", criteria=[("A", 1)])
    services_rubrics.rubric_item_add(rubric=rubric, text="B", points=3, actor=people.ta, confirmed=False)
    services_rubrics.rubric_item_update(item=rubric.items.get(text="A"), points=2, actor=people.ta, confirmed=False)
    services_rubrics.rubric_item_remove(item=rubric.items.get(text="B"), actor=people.ta, confirmed=False)
    assert list(rubric.items.values_list("text", "points")) == [("A", 2)]


# --- Other points, and removing an item ------------------------------------------------------


def test_new_points_are_asked_then_scored_again(people, graded):
    """B +2 → +3 (out of 6): 12 scores change; the three A+B+C answers stay at 100% but list
    B's new points, so they are graded again too (same score, a row in their history)."""
    item_b = graded["items"]["B"]
    before, grades = scores(graded["answers"]), grade_count()
    needed = ask(lambda confirmed: services_rubrics.rubric_item_update(
        item=item_b, points=3, actor=people.instructor, confirmed=confirmed
    ))
    assert needed.message == (
        "15 answers were graded with this rubric, out of 5 points; with “B” worth +3 instead of +2 they are "
        "scored out of 6: 12 scores change (e.g. 20% → 33.3%). Students see the new scores at once. Each new "
        "score is kept in the answer's grading history; answers given a typed score are not changed."
    )
    item_b.refresh_from_db()
    assert item_b.points == 2 and scores(graded["answers"]) == before and grade_count() == grades
    services_rubrics.rubric_item_update(item=item_b, points=3, actor=people.instructor, confirmed=needed.token)
    earned = [3, 5, 6, 2, 1]
    assert scores(graded["answers"]) == [round(earned[index // 3] / 6, 6) for index in range(15)]
    assert grade_count() == grades + 15
    full = graded["answers"][6]
    assert full.feedback["rubric"] == [
        {"text": "A", "points": 2.0}, {"text": "B", "points": 3.0}, {"text": "C", "points": 1.0},
    ]
    newest = full.manual_grades.order_by("-created_at", "-id").first()
    assert (newest.previous_score, newest.score, newest.grader) == (1.0, 1.0, people.instructor)
    assert newest.reason == (
        "Scored again from its ticked items when the rubric changed (“B” worth +3 instead of +2): "
        "out of 6 points, was 5."
    )
    # The earlier grade still says what it counted then.
    first = full.manual_grades.order_by("created_at", "id").first()
    assert [line["points"] for line in first.rubric_ticked] == [2.0, 2.0, 1.0]


def test_rewording_an_item_scores_nothing_again(people, graded):
    grades = grade_count()
    services_rubrics.rubric_item_update(item=graded["items"]["C"], text="C, said plainly", actor=people.ta, confirmed=False)
    assert grade_count() == grades


def test_removing_a_deduction_is_asked_then_scored_again(client, people, graded):
    """D −1 leaves: still out of 5; the three B+D answers go from 20% to 40%."""
    item_d = graded["items"]["D"]
    client.login(username="ines", password=PASSWORD)
    asked = client.post(rubric_url(graded["item"]), {"remove": str(item_d.pk)})
    assert asked.status_code == 200
    page = asked.content.decode()
    assert question_of(page) == (
        "15 answers were graded with this rubric, out of 5 points; without “D” (-1) they are still scored out of "
        "5: 3 scores change (e.g. 20% → 40%). Students see the new scores at once. Each new score is kept in the "
        "answer's grading history; answers given a typed score are not changed."
    )
    assert RubricItem.objects.filter(pk=item_d.pk).exists()
    grades = grade_count()
    done = client.post(rubric_url(graded["item"]), {"remove": str(item_d.pk), "confirm": "yes", "impact": token_of(page)})
    assert done.status_code == 302
    assert not RubricItem.objects.filter(pk=item_d.pk).exists()
    earned = [3, 4, 5, 2, 1]
    assert scores(graded["answers"]) == [round(earned[index // 3] / 5, 6) for index in range(15)]
    assert grade_count() == grades + 3
    removed_from = graded["answers"][9]
    assert removed_from.feedback["rubric"] == [{"text": "B", "points": 2.0}]
    first = removed_from.manual_grades.order_by("created_at", "id").first()
    assert first.rubric_ticked == [
        {"id": graded["items"]["B"].pk, "text": "B", "points": 2.0}, {"id": item_d.pk, "text": "D", "points": -1.0},
    ]


def test_the_last_item_worth_points_stays_while_answers_are_graded_with_it(people):
    version = published_version(source=FREE_TEXT_YAML)
    item = assignment_create(people.course, [version], slug="one").items.get()
    rubric = services_rubrics.rubric_create(course=people.course, item=item, part="why", criteria=[("Only", 1)])
    answer = submission_add(variant_for(item, people.student, params={"d": 64}), "why", "x", awarded=None,
                            status=SubmissionStatus.MANUAL)
    only = rubric.items.get()
    services_rubrics.submission_grade_with_rubric(submission=answer, rubric=rubric, grader=people.ta, item_ids=[only.pk])
    with pytest.raises(services_rubrics.RubricConflict, match="1 answer was graded with this rubric: it keeps at least "
                       "one item worth points."):
        services_rubrics.rubric_item_remove(item=only, actor=people.ta, confirmed=True)
    with pytest.raises(services_rubrics.RubricConflict, match="keeps at least one item worth points"):
        services_rubrics.rubric_item_update(item=only, points=-1, actor=people.ta, confirmed=True)
    assert list(rubric.items.values_list("points", flat=True)) == [1]


# --- The token ---------------------------------------------------------------------------


def test_a_stale_token_is_refused_and_asked_again(client, people, graded):
    """Asked with 15 answers; one more is graded with the rubric before the confirmation:
    the old token no longer confirms, the page says the numbers changed, nothing changes."""
    client.login(username="tariq", password=PASSWORD)
    asked = client.post(rubric_url(graded["item"]), {"text": "TA item", "points": "100"}).content.decode()
    services_rubrics.submission_grade_with_rubric(
        submission=graded["waiting"], rubric=graded["rubric"], grader=people.ta, item_ids=[graded["items"]["A"].pk]
    )
    before, grades = scores(graded["answers"]), grade_count()
    again = client.post(
        rubric_url(graded["item"]), {"text": "TA item", "points": "100", "confirm": "yes", "impact": token_of(asked)}
    )
    assert again.status_code == 200
    page = again.content.decode()
    assert "Nothing is changed yet: the numbers changed since you confirmed." in page
    assert question_of(page).startswith(
        "16 answers were graded with this rubric, out of 5 points; with “TA item” (+100) they are scored out of "
        "105: 16 scores change (e.g. 100% → 4.8%)."
    )
    assert graded["rubric"].items.count() == 4
    assert scores(graded["answers"]) == before and grade_count() == grades
    done = client.post(
        rubric_url(graded["item"]), {"text": "TA item", "points": "100", "confirm": "yes", "impact": token_of(page)}
    )
    assert done.status_code == 302 and graded["rubric"].items.count() == 5
    assert grade_count() == grades + 16


def test_a_token_confirms_only_its_own_change(people, graded):
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    with pytest.raises(ConfirmationNeeded) as other:
        services_rubrics.rubric_item_add(
            rubric=graded["rubric"], text="TA item", points=50, actor=people.ta, confirmed=needed.token
        )
    assert not other.value.stale and "scored out of 55" in other.value.message
    with pytest.raises(ConfirmationNeeded):
        services_rubrics.rubric_item_add(rubric=graded["rubric"], text="TA item", points=100, actor=people.ta,
                                         confirmed="forged")
    assert graded["rubric"].items.count() == 4


def test_an_expired_token_is_asked_again(people, graded, settings):
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    settings.CONFIRMATION_MAX_AGE_SECONDS = -1
    with pytest.raises(ConfirmationNeeded) as again:
        services_rubrics.rubric_item_add(
            rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=needed.token
        )
    assert again.value.expired and again.value.message == f"{EXPIRED_NOTICE} {QUESTION_ADD}"
    assert graded["rubric"].items.count() == 4


# --- Who is scored again ---------------------------------------------------------------------


def test_an_answer_graded_since_with_a_typed_score_or_returned_is_left_alone(people, graded):
    """Its newest grade is not the rubric's: 13 answers graded with the rubric remain."""
    retyped, returned = graded["answers"][0], graded["answers"][1]
    services.submission_grade_manually(submission=retyped, grader=people.instructor, score=0.9)
    ManualGrade.objects.create(submission=returned, grader=people.instructor, kind=ManualGradeKind.RETURNED,
                               score=returned.score, previous_score=returned.score)
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    assert needed.message.startswith("13 answers were graded with this rubric, out of 5 points;")
    assert "13 scores change (e.g. 100% → 4.8%)" in needed.message  # the first is sam's neighbour, also 0.6
    services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=needed.token
    )
    assert scores([retyped, returned]) == [0.9, 0.6]
    assert retyped.manual_grades.count() == 2 and returned.manual_grades.count() == 2


def test_the_question_says_when_students_do_not_see_their_scores_yet(people, graded):
    assignment = graded["item"].assignment
    assignment.show_score = "on_release"
    assignment.save(update_fields=["show_score"])
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    assert "No student sees these scores yet." in needed.message


def test_answers_in_two_assignments_are_counted_together(people, graded):
    """The rubric is the course's for the part: another assignment's answers are graded with it
    too. That one shows scores once released (not yet): its student does not see the change."""
    other = assignment_create(
        people.course, [graded["item"].exercise_version], slug="again", show_score="on_release"
    ).items.get()
    answer = submission_add(variant_for(other, people.student, params={"d": 64}, seed=99), "why", "again",
                            awarded=None, status=SubmissionStatus.MANUAL)
    services_rubrics.submission_grade_with_rubric(
        submission=answer, rubric=graded["rubric"], grader=people.ta, item_ids=[graded["items"]["A"].pk]
    )
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    assert needed.message == (
        "16 answers (in 2 assignments) were graded with this rubric, out of 5 points; with “TA item” (+100) they are "
        "scored out of 105: 16 scores change (e.g. 100% → 4.8%). 15 of these 16 scores are shown to their students "
        "now, so they see the new ones at once; the others once the review policy shows them. Each new score is "
        "kept in the answer's grading history; answers given a typed score are not changed."
    )


# --- Answers graded before this rule: out of step with the rubric --------------------------


def test_answers_out_of_step_with_the_rubric_are_shown_and_scored_again(client, people, graded):
    """The walk's state: an item was added without scoring anything again and one answer was
    saved again under the new total. The page says so; scoring them again asks first."""
    RubricItem.objects.create(rubric=graded["rubric"], text="TA item", points=100, position=5)
    client.login(username="tariq", password=PASSWORD)
    page = client.get(question_url(graded["item"])).content.decode()
    assert ("15 answers graded with this rubric have a score its ticked items do not give under the rubric as it "
            "stands (graded before its items changed), e.g. 60% where the rubric now gives 2.9%.") in page
    asked = client.post(rubric_url(graded["item"]), {"rescore": "1"}).content.decode()
    assert question_of(asked) == (
        "15 answers were graded with this rubric; scored from their ticked items under the rubric as it stands, "
        "out of 105 points, 15 scores change (e.g. 100% → 4.8%). Students see the new scores at once. Each new "
        "score is kept in the answer's grading history; answers given a typed score are not changed."
    )
    assert scores(graded["answers"])[0] == 0.6
    done = client.post(rubric_url(graded["item"]), {"rescore": "1", "confirm": "yes", "impact": token_of(asked)})
    assert done.status_code == 302
    assert scores(graded["answers"])[0] == round(3 / 105, 6)
    newest = graded["answers"][0].manual_grades.order_by("-created_at", "-id").first()
    assert newest.reason == "Scored again from its ticked items under the rubric as it stands, out of 105 points."
    assert "rubric-out-of-step" not in client.get(question_url(graded["item"])).content.decode()


# --- The grading pages ---------------------------------------------------------------------


def test_the_score_column_shows_points_of_the_part(client, people, graded):
    """0.6 of a part worth 0.25 points reads 0.15 / 0.25, as the gradebook counts it."""
    client.login(username="tariq", password=PASSWORD)
    page = client.get(question_url(graded["item"])).content.decode()
    assert 'Points <span class="muted">/0.25</span>' in page
    rows = re.findall(r'<td class="num">([^<]*)</td></tr>', page)
    assert rows[:5] == ["0.15 / 0.25", "0.15 / 0.25", "0.15 / 0.25", "0.20 / 0.25", "0.20 / 0.25"]
    assert "0.60" not in re.sub(r"<p.*?</p>", "", page.split('id="question-answers"')[1])
    answer = client.get(reverse("instructor:grading_answer", args=["attn", graded["item"].pk, "why",
                                                                   graded["answers"][0].pk])).content.decode()
    assert "graded 0.15 / 0.25 points" in answer


def test_a_late_penalty_shows_beside_the_points(client, people, graded):
    sam = graded["answers"][0]
    sam.awarded = 0.48
    sam.save(update_fields=["awarded"])
    client.login(username="tariq", password=PASSWORD)
    page = client.get(question_url(graded["item"])).content.decode()
    assert '0.12 / 0.25 <span class="muted">(0.15 before penalties)</span>' in page


def test_the_answer_page_lists_its_grades_with_the_reason(client, people, graded):
    services_rubrics.rubric_item_add(rubric=graded["rubric"], text="TA item", points=100, actor=people.ta)
    client.login(username="ines", password=PASSWORD)
    page = client.get(reverse("instructor:grading_answer", args=["attn", graded["item"].pk, "why",
                                                                 graded["answers"][0].pk])).content.decode()
    history = unescape(page.split('id="grade-history"')[1].split("</ul>")[0])
    assert "60% → 2.9% by tariq, with the rubric out of 105. Scored again from its ticked items when the rubric " \
           "changed (“TA item” (+100) added): out of 105 points, was 5." in history
    assert "0% → 60% by tariq, with the rubric out of 5" not in history  # it was waiting: no score before
    assert "60% by tariq, with the rubric out of 5</li>" in history


def test_changing_points_from_an_answer_page_asks_there(client, people, graded):
    sam = graded["answers"][0]
    client.login(username="tariq", password=PASSWORD)
    response = client.post(
        rubric_url(graded["item"]), {"update": str(graded["items"]["A"].pk), "points": "4", "back_to": str(sam.pk)}
    )
    page = response.content.decode()
    assert response.status_code == 200 and 'id="rubric-grade-form"' in page
    assert question_of(page).startswith(
        "15 answers were graded with this rubric, out of 5 points; with “A” worth +4 instead of +2 they are scored "
        "out of 7: 12 scores change (e.g. 60% → 71.4%)."
    )
    done = client.post(rubric_url(graded["item"]), {
        "update": str(graded["items"]["A"].pk), "points": "4", "back_to": str(sam.pk),
        "confirm": "yes", "impact": token_of(page),
    })
    assert done.status_code == 302 and done["Location"].endswith(f"/{sam.pk}/")
    assert scores([sam]) == [round(5 / 7, 6)]


@pytest.mark.parametrize("posted, message", [
    ({"update": "999999", "points": "2"}, "No such rubric item."),
    ({"update": "A", "points": "two"}, "An item&#x27;s points are a number, e.g. 2 or -1."),
    ({"update": "A", "points": "nan"}, "An item&#x27;s points are a number, e.g. 2 or -1."),
    ({"update": "A", "points": "500"}, "A rubric item is worth between -100 and 100 points."),
])
def test_bad_points_are_refused_with_a_message(client, people, graded, posted, message):
    if posted["update"] == "A":
        posted = {**posted, "update": str(graded["items"]["A"].pk)}
    client.login(username="tariq", password=PASSWORD)
    response = client.post(rubric_url(graded["item"]), posted, follow=True)
    assert response.status_code == 200 and message in response.content.decode()
    assert graded["items"]["A"].__class__.objects.get(pk=graded["items"]["A"].pk).points == 2


def test_students_may_not_change_a_rubric(client, people, graded):
    client.login(username="sam", password=PASSWORD)
    response = client.post(rubric_url(graded["item"]), {"text": "Mine", "points": "100"})
    assert response.status_code == 403
    assert graded["rubric"].items.count() == 4


# --- Decided under the rubric's lock ---------------------------------------------------------


@pytest.mark.integration
def test_an_answer_graded_during_a_change_waits_and_lands_on_the_new_scale(transactional_db, people, graded,
                                                                         monkeypatch):
    """A change holds the rubric's row while it scores the answers again; a grade of another
    answer with the rubric at that moment waits for it, then reads the new items: 2 of 105,
    not 2 of 5 beside 15 answers scored out of 105."""
    import threading
    import time

    from django.db import connection

    from instructor import selectors_rubric_change

    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    inside, release = threading.Event(), threading.Event()
    real = selectors_rubric_change.rubric_rescore

    def held(**kwargs):
        inside.set()
        release.wait(10)
        return real(**kwargs)

    monkeypatch.setattr(selectors_rubric_change, "rubric_rescore", held)
    done = {}

    def run(name, call):
        try:
            call()
            done[name] = time.monotonic()
        finally:
            connection.close()

    change = threading.Thread(target=run, args=("change", lambda: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta,
    )))
    grade = threading.Thread(target=run, args=("grade", lambda: services_rubrics.submission_grade_with_rubric(
        submission=graded["waiting"], rubric=graded["rubric"], grader=people.instructor,
        item_ids=[graded["items"]["A"].pk],
    )))
    change.start()
    assert inside.wait(10)
    grade.start()
    time.sleep(0.5)
    assert "grade" not in done  # it waits for the rubric's lock
    release.set()
    change.join(10)
    grade.join(10)
    assert scores([graded["waiting"]]) == [round(2 / 105, 6)]
    assert scores(graded["answers"])[0] == round(3 / 105, 6)


# --- Grades given before the rubric was recorded with them (migration 0007) -----------------


def test_earlier_rubric_grades_get_their_rubric_and_ticked_items_back(people, graded):
    """The migration's recovery: the rubric of the items a grade ticked and those items as
    they stand; the total then stays unknown; a typed score keeps no rubric."""
    import importlib

    from django.apps import apps

    recovery = importlib.import_module("instructor.migrations.0007_manual_grade_rubric_record")
    ManualGrade.objects.update(rubric=None, rubric_ticked=[], rubric_maximum=None)
    recovery.rubric_record_recover(apps, None)
    sam = graded["answers"][0].manual_grades.get()
    assert (sam.rubric, sam.rubric_maximum) == (graded["rubric"], None)
    assert sam.rubric_ticked == [
        {"id": graded["items"]["A"].pk, "text": "A", "points": 2.0},
        {"id": graded["items"]["C"].pk, "text": "C", "points": 1.0},
    ]
    typed = graded["typed"].manual_grades.get()
    assert (typed.rubric, typed.rubric_ticked) == (None, [])
    # Recovered, they are graded with the rubric: a change scores them again.
    needed = ask(lambda confirmed: services_rubrics.rubric_item_add(
        rubric=graded["rubric"], text="TA item", points=100, actor=people.ta, confirmed=confirmed
    ))
    assert needed.message.startswith("15 answers were graded with this rubric, out of 5 points;")


def test_the_questions_example_is_the_largest_change_told_apart():
    """Of the scores that change, the example is the largest change (an answer without a score
    first), shown with as many decimals as it takes for the two to read differently."""
    from types import SimpleNamespace as Answer

    from instructor.selectors_rubric_change import _example_change

    small = Answer(score_before=3 / 107, score_after=3 / 108)  # 2.804% → 2.778%: "2.8% → 2.8%" at one decimal
    assert _example_change([small]) == "2.8% → 2.78%"
    larger = Answer(score_before=0.6, score_after=0.5)
    assert _example_change([small, larger, Answer(score_before=0.2, score_after=0.1)]) == "60% → 50%"
    assert _example_change([larger, Answer(score_before=None, score_after=0.25)]) == "no score → 25%"
