"""Editing an assignment students have started, beyond its exercises and clock: new pools,
another version of an exercise, a new kind, fewer attempts, and all of it for homework
too. Each asks first, in numbers, and saves only on a confirmation whose token matches
the numbers computed again; with nobody started it saves at once."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from authoring.tests.factories import assignment_create, product_yaml, published_version, user_create, variant_for
from courses import pools
from courses.models import AssignmentItem, Enrolment, PoolDraw, Role
from exams.models import Accommodation, AssignmentAttempt
from exercises.models import Variant
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.services import SubmissionRefused, submission_create
from instructor import selectors_edit_impact, services
from instructor.selectors_edit_impact import AttemptsReached, PoolsReached
from instructor.tests.test_edit_running_exam import TITLE, _confirmation, _login, _settings, _token, exam  # noqa: F401

WHO = "3 students are working on this exam now and 2 have finished."
STALE = "Nothing is changed yet: the numbers changed since you confirmed."
STALE_SETTINGS = "Nothing is saved yet: the numbers changed since you confirmed."


def _student(people, username: str):
    student = user_create(username)
    Enrolment.objects.create(course=people.course, user=student, role=Role.STUDENT)
    return student


def _one_more_starts(exam, people, username: str = "late"):
    """Another student starts the exam now (their attempt runs)."""
    AssignmentAttempt.objects.create(assignment=exam, student=_student(people, username), started_at=timezone.now())


def _answers(variant, part: str, count: int, status: str = SubmissionStatus.GRADED) -> None:
    for _ in range(count):
        attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
        Submission.objects.create(
            variant=variant, student=variant.student, part=part, raw_answer="1", attempt=attempt,
            status=status, score=0.0, awarded=0.0, correct=False,
        )


def _user(username: str):
    return AssignmentAttempt.objects.get(student__username=username).student


def _asked_then_confirmed(client, url: str, data: dict, *, expected: str, saved, settings_page: bool = False):
    """The question (nothing saved), a stale-free confirmation, saved."""
    response = client.post(url, data)
    assert response.status_code == 200
    assert _confirmation(response).endswith(expected)
    assert not saved()
    confirmed = client.post(url, {**data, "confirm": "yes", "impact": _token(response)})
    assert confirmed.status_code == 302
    assert saved()


# --- Pools -------------------------------------------------------------------------------


def _pools_data(exam, **names) -> dict:
    """The pools form: each item's pool by its exercise's slug (empty when not named)."""
    return {
        f"pool_{item.pk}": names.get(item.exercise_version.exercise.slug, item.pool)
        for item in exam.items.select_related("exercise_version__exercise")
    }


def test_pooling_exercises_every_student_was_given_asks_first_and_says_they_lose_one(client, exam):
    _login(client)
    url = reverse("instructor:item_pools", args=["attn", exam.slug])
    data = _pools_data(exam, first="p", second="p")
    _asked_then_confirmed(
        client, url, data,
        expected=f"{WHO} Exercises already drawn for them stay theirs; with the new pools 5 of them lose an "
        "exercise they were given, with its points.",
        saved=lambda: sorted(exam.items.values_list("pool", flat=True)) == ["p", "p"],
    )


def test_a_drawn_exercise_stays_drawn_so_moving_another_asks_and_says_all_keep_theirs(client, exam, people):
    """Pools p = {first, second} and r = {third, fourth}: everyone drew first and third.
    Moving second (drawn by nobody) into r changes nothing anyone was given."""
    for slug, position in (("third", 2), ("fourth", 3)):
        AssignmentItem.objects.create(
            assignment=exam, exercise_version=published_version(source=product_yaml(slug=slug)), position=position,
        )
    items = {item.exercise_version.exercise.slug: item for item in exam.items.select_related("exercise_version__exercise")}
    for slug, pool in (("first", "p"), ("second", "p"), ("third", "r"), ("fourth", "r")):
        items[slug].pool = pool
        items[slug].save()
    for attempt in AssignmentAttempt.objects.all():
        PoolDraw.objects.create(assignment=exam, student=attempt.student, pool="p", item=items["first"])
        PoolDraw.objects.create(assignment=exam, student=attempt.student, pool="r", item=items["third"])
    given_before = {
        attempt.student.username: [item.pk for item in pools.student_items(assignment=exam, student=attempt.student)]
        for attempt in AssignmentAttempt.objects.select_related("student")
    }
    _login(client)
    _asked_then_confirmed(
        client, reverse("instructor:item_pools", args=["attn", exam.slug]), _pools_data(exam, second="r"),
        expected=f"{WHO} Exercises already drawn for them stay theirs; with the new pools all 5 keep the "
        "exercises they were given.",
        saved=lambda: AssignmentItem.objects.get(pk=items["second"].pk).pool == "r",
    )
    # What the sentence said: each is given exactly what they were given before.
    assert given_before == {
        attempt.student.username: [item.pk for item in pools.student_items(assignment=exam, student=attempt.student)]
        for attempt in AssignmentAttempt.objects.select_related("student")
    }


def test_taking_an_undrawn_exercise_out_of_its_pool_gives_it_to_everyone(client, exam):
    first, second = exam.items.order_by("position")
    AssignmentItem.objects.filter(pk__in=[first.pk, second.pk]).update(pool="p")
    for attempt in AssignmentAttempt.objects.all():
        PoolDraw.objects.create(assignment=exam, student=attempt.student, pool="p", item=first)
    _login(client)
    _asked_then_confirmed(
        client, reverse("instructor:item_pools", args=["attn", exam.slug]), _pools_data(exam, second=""),
        expected=f"{WHO} Exercises already drawn for them stay theirs; with the new pools 5 of them are given "
        "another exercise, with its points. Those who have finished cannot answer it and score 0 on it.",
        saved=lambda: AssignmentItem.objects.get(pk=second.pk).pool == "",
    )
    sam = AssignmentAttempt.objects.get(student__username="sam").student
    assert [item.pk for item in pools.student_items(assignment=exam, student=sam)] == [first.pk, second.pk]


def test_a_pools_confirmation_does_not_confirm_another_pools_change_that_reads_the_same(client, exam):
    """{first, second -> p1} asks with token T; {third, fourth -> p2} reads the same word for
    word, yet T does not confirm it: asked again (plainly, not "the numbers changed"), nothing
    saved. T still confirms its own change."""
    for slug, position in (("third", 2), ("fourth", 3)):
        AssignmentItem.objects.create(
            assignment=exam, exercise_version=published_version(source=product_yaml(slug=slug)), position=position,
        )
    _login(client)
    url = reverse("instructor:item_pools", args=["attn", exam.slug])
    one = _pools_data(exam, first="p1", second="p1")
    other = _pools_data(exam, third="p2", fourth="p2")
    expected = (
        f"{WHO} Exercises already drawn for them stay theirs; with the new pools 5 of them lose an "
        "exercise they were given, with its points."
    )
    asked = client.post(url, one)
    assert asked.status_code == 200
    assert _confirmation(asked).endswith(expected)

    swapped = client.post(url, {**other, "confirm": "yes", "impact": _token(asked)})
    assert swapped.status_code == 200
    shown = _confirmation(swapped)
    assert shown.endswith(f"<p><strong>Nothing is changed yet.</strong> {expected}")
    assert _token(swapped) != _token(asked)
    assert sorted(exam.items.values_list("pool", flat=True)) == ["", "", "", ""]

    # Its own token confirms the other change; T confirms only {first, second -> p1}.
    done = client.post(url, {**one, "confirm": "yes", "impact": _token(asked)})
    assert done.status_code == 302
    assert dict(exam.items.values_list("exercise_version__exercise__slug", "pool")) == {
        "first": "p1", "second": "p1", "third": "", "fourth": "",
    }


def test_the_pools_sentence_counts_each_kind_of_change():
    reached = AttemptsReached(working=1, finished=3)
    assert selectors_edit_impact.pools_change_sentence(
        reached, change=PoolsReached(keep=1, lose=2, gain=1, finished_gain=0)
    ) == (
        "1 student is working on this exam now and 3 have finished. Exercises already drawn for them stay theirs; "
        "with the new pools 1 of them keeps the exercises they were given, 2 lose an exercise they were given, "
        "with its points and 1 is given another exercise, with its points."
    )
    assert selectors_edit_impact.pools_change_sentence(
        AttemptsReached(working=1, noun="homework"), change=PoolsReached(keep=1)
    ) == (
        "1 student is still working on this homework. Exercises already drawn for them stay theirs; with the new "
        "pools they keep the exercises they were given."
    )


def test_pools_without_anyone_started_save_at_once(client, exam):
    AssignmentAttempt.objects.all().delete()
    _login(client)
    response = client.post(reverse("instructor:item_pools", args=["attn", exam.slug]), _pools_data(exam, first="p", second="p"))
    assert response.status_code == 302
    assert sorted(exam.items.values_list("pool", flat=True)) == ["p", "p"]


# --- Another version of an exercise ------------------------------------------------------


@pytest.fixture
def switch(exam):
    """v2 of the exam's first exercise; r1 and r2 (working) opened it under v1, r1 and
    sam (finished) answered it."""
    item = exam.items.get(position=0)
    v2 = published_version(source=product_yaml(slug="first", answer="a * b + 1"), number=2, exercise=item.exercise_version.exercise)
    variants = {
        name: variant_for(item, _user(name), params={"a": 3, "b": 4}, seed=seed)
        for seed, name in enumerate(("r1", "r2", "sam"), start=1)
    }
    _answers(variants["r1"], "product", 1)
    _answers(variants["sam"], "product", 2)
    return {"item": item, "v2": v2, "variants": variants}


SWITCH = (
    f"Switching '{TITLE}' from v1 to v2 gives 2 students still working who have opened it a new copy under v2 "
    "the next time they open it (numbers drawn again, attempts counted afresh). The answers 2 students saved "
    "stay graded under v1 until you run a regrade."
)


def test_switching_the_version_asks_first_and_says_who_gets_a_new_copy(client, exam, switch):
    item, v2 = switch["item"], switch["v2"]
    _login(client)
    url = reverse("instructor:item_update", args=["attn", exam.slug, item.pk])
    data = {"points": "1", "position": "1", "version": v2.pk}
    response = client.post(url, data)
    assert 'name="confirm" value="yes">Switch the version anyway' in response.content.decode()
    _asked_then_confirmed(
        client, url, data, expected=f"{WHO} {SWITCH}",
        saved=lambda: AssignmentItem.objects.get(pk=item.pk).exercise_version_id == v2.pk,
    )
    # What the sentence said: r1's next view is a new variant under v2; their answer stays on v1's.
    item.refresh_from_db()
    fresh = variant_get_or_create_for_item(item=item, student=_user("r1"))
    assert (fresh.exercise_version_id, fresh.pk != switch["variants"]["r1"].pk) == (v2.pk, True)
    assert Submission.objects.get(student__username="r1").variant.exercise_version.number == 1


def test_new_points_and_a_new_version_at_once_ask_once_with_both(client, exam, switch):
    item, v2 = switch["item"], switch["v2"]
    _login(client)
    url = reverse("instructor:item_update", args=["attn", exam.slug, item.pk])
    data = {"points": "2", "position": "1", "version": v2.pk}
    response = client.post(url, data)
    assert 'name="confirm" value="yes">Save anyway' in response.content.decode()
    _asked_then_confirmed(
        client, url, data,
        expected=f"{WHO} Changing '{TITLE}' from 1 point to 2 points changes their totals. {SWITCH}",
        saved=lambda: AssignmentItem.objects.filter(pk=item.pk, exercise_version=v2, points=2).exists(),
    )


def test_switching_a_version_nobody_working_opened_says_so(exam, switch):
    Submission.objects.filter(student__username="r1").delete()
    Variant.objects.filter(student__username__in=["r1", "r2"]).delete()
    with pytest.raises(services.ConfirmationNeeded) as needed:
        services.assignment_item_update(item=switch["item"], points=1, position=0, version=switch["v2"], confirmed=False)
    assert needed.value.message == (
        f"{WHO} Switching '{TITLE}' from v1 to v2: nobody still working has opened it, so whoever opens it from "
        "now gets v2. The answers 1 student saved stay graded under v1 until you run a regrade."
    )


# --- Exam or homework --------------------------------------------------------------------


def test_making_an_exam_homework_asks_first_and_says_who_may_answer_again(client, exam, switch, people):
    """sam opened the first exercise 30 minutes ago: as homework his 15 minutes count from
    then and are up; sue opened nothing, so homework takes her answers again."""
    Variant.objects.filter(student__username="sam").update(created_at=timezone.now() - timedelta(minutes=30))
    _login(client)
    url = reverse("instructor:assignment_edit", args=["attn", exam.slug])
    _asked_then_confirmed(
        client, url, _settings(exam, kind="homework"),
        expected=f"{WHO} Making it homework keeps every saved answer and lets 1 student who has finished answer "
        "again while it is open to them.",
        saved=lambda: type(exam).objects.get(pk=exam.pk).kind == "homework",
    )
    exam.refresh_from_db()
    item = exam.items.get(position=1)
    sue_variant = variant_get_or_create_for_item(item=item, student=people.student2)
    assert submission_create(variant=sue_variant, student=people.student2, part="total", raw_answer="7").pk
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(variant=switch["variants"]["sam"], student=people.student, part="total", raw_answer="7")
    assert refused.value.code == "time_up"


@pytest.fixture
def homework(people):
    """Homework of two exercises, closing tomorrow: r1 and r2 opened an exercise (working),
    r3 opened one but their own close date has passed (finished), sam opened nothing."""
    first = published_version(source=product_yaml(slug="first"))
    second = published_version(source=product_yaml(slug="second"))
    homework = assignment_create(
        people.course, [first, second], slug="hw", kind="homework", closes_at=timezone.now() + timedelta(days=1)
    )
    item = homework.items.get(position=0)
    for seed, username in enumerate(("r1", "r2", "r3"), start=1):
        variant_for(item, _student(people, username), params={"a": 3, "b": 4}, seed=seed)
    Accommodation.objects.create(
        assignment=homework, student=Variant.objects.get(student__username="r3").student,
        closes_at=timezone.now() - timedelta(hours=1),
    )
    # The instructor looked at it too: staff are not students who started.
    variant_for(item, people.instructor, params={"a": 3, "b": 4}, seed=9)
    return homework


HW_WHO = "2 students are still working on this homework and 1 has finished."


def test_making_homework_an_exam_asks_first_and_says_who_must_press_start(client, homework, people):
    _login(client)
    url = reverse("instructor:assignment_edit", args=["attn", homework.slug])
    _asked_then_confirmed(
        client, url, _settings(homework, kind="exam", time_limit_minutes="20"),
        expected=f"{HW_WHO} Making it an exam keeps every saved answer and asks 2 students still working to press "
        "Start before they answer again (their time limit then counts from that Start).",
        saved=lambda: type(homework).objects.get(pk=homework.pk).kind == "exam",
    )
    r1 = Variant.objects.get(student__username="r1")
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(variant=r1, student=r1.student, part="total", raw_answer="7")
    assert refused.value.code == "not_started"


def test_existing_confirmations_apply_to_homework_with_homework_wording(client, homework):
    _login(client)
    item = homework.items.get(position=0)
    url = reverse("instructor:item_update", args=["attn", homework.slug, item.pk])
    data = {"points": "3", "position": "1", "version": item.exercise_version_id}
    _asked_then_confirmed(
        client, url, data,
        expected=f"{HW_WHO} Changing '{TITLE}' from 1 point to 3 points changes their totals.",
        saved=lambda: AssignmentItem.objects.get(pk=item.pk).points == 3,
    )
    third = published_version(source=product_yaml(slug="third"))
    _asked_then_confirmed(
        client, reverse("instructor:item_add", args=["attn", homework.slug]), {"version": third.pk, "points": "1"},
        expected=f"{HW_WHO} Adding '{TITLE}' adds 1 point to their totals. Those who have finished cannot answer "
        "it and score 0 on it.",
        saved=lambda: homework.items.filter(exercise_version=third).exists(),
    )


def test_a_time_limit_on_started_homework_counts_from_the_first_opened_exercise(client, homework):
    """r1 opened an exercise 25 minutes ago, r2 just now: 20 minutes end r1's time and
    give r2 a limit they did not have."""
    Variant.objects.filter(student__username="r1").update(created_at=timezone.now() - timedelta(minutes=25))
    _login(client)
    _asked_then_confirmed(
        client, reverse("instructor:assignment_edit", args=["attn", homework.slug]),
        _settings(homework, time_limit_minutes="20"),
        expected="Setting a time limit of 20 min ends 1 running attempt now and shortens 1 other.",
        saved=lambda: type(homework).objects.get(pk=homework.pk).time_limit_minutes == 20,
    )


def test_homework_nobody_opened_saves_at_once(client, homework):
    Variant.objects.all().delete()
    _login(client)
    response = client.post(
        reverse("instructor:assignment_edit", args=["attn", homework.slug]),
        _settings(homework, kind="exam", time_limit_minutes="20"),
    )
    assert response.status_code == 302
    homework.refresh_from_db()
    assert (homework.kind, homework.time_limit_minutes) == ("exam", 20)


# --- Fewer attempts ----------------------------------------------------------------------


@pytest.fixture
def attempts(exam, people):
    """5 attempts per part: r1 and r2 used 3 on a part, r3 used 2 (and one answer that
    could not be graded, which uses none), sam (finished) used 4."""
    exam.attempts_per_part = 5
    exam.save()
    item = exam.items.get(position=0)
    used = {"r1": 3, "r2": 3, "r3": 2, "sam": 4}
    for seed, (username, count) in enumerate(used.items(), start=1):
        variant = variant_for(item, _user(username), params={"a": 3, "b": 4}, seed=seed)
        _answers(variant, "product", count)
        _answers(variant, "total", 1)
    _answers(Variant.objects.get(student__username="r3"), "product", 1, status=SubmissionStatus.COULD_NOT_GRADE)
    return exam


def test_fewer_attempts_than_students_used_asks_first_in_numbers(client, attempts):
    _login(client)
    _asked_then_confirmed(
        client, reverse("instructor:assignment_edit", args=["attn", attempts.slug]),
        _settings(attempts, attempts_per_part="2"),
        expected="2 students have already used 3 attempts on a part and 1 has used 2; with 2 allowed they can "
        "make no more there.",
        saved=lambda: type(attempts).objects.get(pk=attempts.pk).attempts_per_part == 2,
    )
    r1 = Variant.objects.get(student__username="r1")
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(variant=r1, student=r1.student, part="product", raw_answer="12")
    assert refused.value.code == "no_attempts"


def test_own_attempts_and_finished_students_are_not_counted(attempts):
    Accommodation.objects.create(assignment=attempts, student=_user("r2"), attempts_per_part=5)
    with pytest.raises(services.ConfirmationNeeded) as needed:
        services.assignment_update(assignment=attempts, confirmed=False, attempts_per_part=3)
    # sam used 4 but has finished; r2 keeps their own 5.
    assert needed.value.message == "1 student has already used 3 attempts on a part; with 3 allowed they can make no more there."


def test_fewer_attempts_that_nobody_working_reached_save_at_once(client, attempts):
    _login(client)
    response = client.post(
        reverse("instructor:assignment_edit", args=["attn", attempts.slug]), _settings(attempts, attempts_per_part="4")
    )
    assert response.status_code == 302
    attempts.refresh_from_db()
    assert attempts.attempts_per_part == 4


# --- A confirmation holds for the numbers it showed -------------------------------------


def _flows(exam):
    """(url, form data, whether it was saved, the button) of each editing page that asks."""
    item = exam.items.get(position=0)
    other = exam.items.get(position=1)
    third = published_version(source=product_yaml(slug="third"))
    fourth = published_version(source=product_yaml(slug="fourth"))
    v2 = published_version(source=product_yaml(slug="first"), number=2, exercise=item.exercise_version.exercise)
    teach = lambda name, *args: reverse(f"instructor:{name}", args=["attn", exam.slug, *args])  # noqa: E731
    # The score shows once an attempt ends: showing it during the attempt shows more.
    type(exam).objects.filter(pk=exam.pk).update(show_score="after_finish")
    exam.refresh_from_db()
    return {
        "points": (teach("item_update", item.pk), {"points": "2", "position": "1", "version": item.exercise_version_id},
                   lambda: AssignmentItem.objects.get(pk=item.pk).points == 2),
        "version": (teach("item_update", item.pk), {"points": "1", "position": "1", "version": v2.pk},
                    lambda: AssignmentItem.objects.get(pk=item.pk).exercise_version_id == v2.pk),
        "remove": (teach("item_remove", other.pk), {}, lambda: not AssignmentItem.objects.filter(pk=other.pk).exists()),
        "add": (teach("item_add"), {"version": third.pk, "points": "1"},
                lambda: exam.items.filter(exercise_version=third).exists()),
        "picker": (teach("exercise_picker"), {"version": [third.pk, fourth.pk], "points": "1"},
                   lambda: exam.items.filter(exercise_version=fourth).exists()),
        "pools": (teach("item_pools"), _pools_data(exam, first="p", second="p"),
                  lambda: exam.items.filter(pool="p").count() == 2),
        "time limit": (teach("assignment_edit"), _settings(exam, time_limit_minutes="10"),
                       lambda: type(exam).objects.get(pk=exam.pk).time_limit_minutes == 10),
        "kind": (teach("assignment_edit"), _settings(exam, kind="homework"),
                 lambda: type(exam).objects.get(pk=exam.pk).kind == "homework"),
        "review": (teach("assignment_edit"), _settings(exam, show_score="during"),
                   lambda: type(exam).objects.get(pk=exam.pk).show_score == "during"),
        "address": (teach("assignment_edit"), _settings(exam, slug="week1-b"),
                    lambda: type(exam).objects.filter(pk=exam.pk, slug="week1-b").exists()),
    }


FLOWS = ["points", "version", "remove", "add", "picker", "pools", "time limit", "kind", "review", "address"]


@pytest.mark.parametrize("flow", FLOWS)
def test_a_stale_confirmation_saves_nothing_and_asks_again_with_the_new_numbers(client, exam, people, flow):
    url, data, saved = _flows(exam)[flow]
    _login(client)
    asked = client.post(url, data)
    assert asked.status_code == 200
    assert "working on this exam now" in _confirmation(asked) or "running attempt" in _confirmation(asked)
    _one_more_starts(exam, people)

    again = client.post(url, {**data, "confirm": "yes", "impact": _token(asked)})
    assert again.status_code == 200
    assert not saved()
    shown = _confirmation(again)
    assert STALE in shown or STALE_SETTINGS in shown
    assert _confirmation(asked) != shown  # the new numbers
    assert _token(again) != _token(asked)

    done = client.post(url, {**data, "confirm": "yes", "impact": _token(again)})
    assert done.status_code == 302
    assert saved()


@pytest.mark.parametrize("flow", FLOWS)
@pytest.mark.parametrize(
    "impact", [None, "", "0" * 24, "0123456789abcdef:forged-signature", "not-a-token", "x" * 5000, "é\u0000<script>"]
)
def test_a_bad_or_missing_token_asks_again_and_saves_nothing(client, exam, people, flow, impact):
    url, data, saved = _flows(exam)[flow]
    _login(client)
    posted = {**data, "confirm": "yes"}
    if impact is not None:
        posted["impact"] = impact
    response = client.post(url, posted)
    assert response.status_code == 200
    assert not saved()
    page = response.content.decode()
    assert 'id="edit-confirmation"' in page and "<script>" not in page
    # A token never shown is no confirmation at all: asked plainly, not "the numbers changed".
    assert "the numbers changed" not in _confirmation(response)


def test_a_token_confirms_only_its_own_change(client, exam):
    """The token of "2 points" does not confirm "3 points"."""
    item = exam.items.get(position=0)
    _login(client)
    url = reverse("instructor:item_update", args=["attn", exam.slug, item.pk])
    two = client.post(url, {"points": "2", "position": "1", "version": item.exercise_version_id})
    three = client.post(
        url, {"points": "3", "position": "1", "version": item.exercise_version_id, "confirm": "yes", "impact": _token(two)}
    )
    assert three.status_code == 200
    assert _confirmation(three).endswith(f"Changing '{TITLE}' from 1 point to 3 points changes their totals.")
    assert AssignmentItem.objects.get(pk=item.pk).points == 1


def test_the_pool_by_skill_service_holds_its_token_to_the_numbers(exam, people):
    from instructor import services_pools

    versions = [published_version(source=product_yaml(slug=slug)) for slug in ("pa", "pb")]
    add = lambda confirmed: services_pools.assignment_pool_add(  # noqa: E731
        assignment=exam, versions=versions, pool="extra", points=1.0, confirmed=confirmed
    )
    with pytest.raises(services.ConfirmationNeeded) as asked:
        add(False)
    _one_more_starts(exam, people)
    with pytest.raises(services.ConfirmationNeeded) as again:
        add(asked.value.token)
    assert again.value.stale and again.value.message.startswith("4 students are working on this exam now")
    assert exam.items.count() == 2
    add(again.value.token)
    assert exam.items.filter(pool="extra").count() == 2


def test_an_item_update_with_missing_fields_is_refused_not_a_500(client, exam):
    item = exam.items.get(position=0)
    _login(client)
    response = client.post(reverse("instructor:item_update", args=["attn", exam.slug, item.pk]), {"confirm": "yes"})
    assert response.status_code == 302
    assert AssignmentItem.objects.get(pk=item.pk).points == 1
