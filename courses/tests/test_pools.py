"""Question pools and per-student order: one item per pool per student, drawn once from
the keyed seed and stored; items not given are out of reach; a stable shuffle."""

from __future__ import annotations

import pytest
from django.db import IntegrityError
from django.urls import reverse

from courses import pools
from courses.models import AssignmentItem, PoolDraw
from exercises import engine
from exercises.services import variant_get_or_create_for_item


@pytest.fixture
def students(demo, django_user_model):
    return [django_user_model.objects.get(username=f"student{n}") for n in (1, 2, 3)]


@pytest.fixture
def assignment(demo):
    return demo.assignment


def items_of(assignment):
    return list(assignment.items.select_related("exercise_version__exercise").order_by("position", "pk"))


@pytest.fixture
def pooled(assignment):
    """The assignment's first three items form pool "p1" (equal points); the rest stay."""
    items = items_of(assignment)
    for item in items[:3]:
        item.pool = "p1"
        item.points = 2.0
        item.save()
    return items[:3]


def expected_pick(assignment, student, pool, members):
    index = engine.pool_pick(
        secret="test-variant-seed-secret", course=assignment.course.slug, assignment=assignment.slug,
        student=str(student.pk), pool=pool, size=len(members),
    )
    return members[index]


def listed_item_ids(client, assignment) -> list[int]:
    response = client.get(reverse("assignment", args=[assignment.course.slug, assignment.slug]))
    assert response.status_code == 200
    return [row["item"].pk for row in response.context["items"]]


# --- the pure draws --------------------------------------------------------------------


def test_pool_pick_is_keyed_by_the_pool_and_the_student():
    key = dict(secret="s", course="c", assignment="a", size=5)
    picks = {
        (student, pool): engine.pool_pick(**key, student=student, pool=pool)
        for student in ("1", "2", "3", "4", "5", "6") for pool in ("p", "q")
    }
    assert all(0 <= pick < 5 for pick in picks.values())
    # Repeated: the same answer; another secret: (for some key) another answer.
    assert picks == {k: engine.pool_pick(**key, student=k[0], pool=k[1]) for k in picks}
    assert picks != {k: engine.pool_pick(**{**key, "secret": "t"}, student=k[0], pool=k[1]) for k in picks}
    assert len(set(picks.values())) > 1


def test_pool_pick_of_one_item_and_of_none():
    assert engine.pool_pick(secret="s", course="c", assignment="a", student="1", pool="p", size=1) == 0
    with pytest.raises(ValueError, match="at least one item"):
        engine.pool_pick(secret="s", course="c", assignment="a", student="1", pool="p", size=0)


def test_pool_pick_is_close_to_uniform():
    counts = [0, 0, 0]
    for student in range(3000):
        counts[engine.pool_pick(secret="s", course="c", assignment="a", student=str(student), pool="p", size=3)] += 1
    assert all(900 < count < 1100 for count in counts), counts


def test_shuffle_is_a_stable_permutation_that_keeps_the_others_order_when_a_slot_is_added():
    key = dict(secret="s", course="c", assignment="a", student="7")
    slots = [f"item:{n}" for n in range(8)]
    order = engine.shuffled_slots(**key, slots=slots)
    assert sorted(order) == sorted(slots)
    assert order == engine.shuffled_slots(**key, slots=list(reversed(slots)))
    assert order != slots  # 1 chance in 40320 of failing by luck; fixed by the key
    longer = engine.shuffled_slots(**key, slots=slots + ["pool:extra"])
    assert [slot for slot in longer if slot != "pool:extra"] == order
    others = {tuple(engine.shuffled_slots(**{**key, "student": str(n)}, slots=slots)) for n in range(10)}
    assert len(others) == 10


def test_pool_points_problems():
    assert pools.pool_points_problems([("", 1), ("a", 2), ("a", 2.0), ("b", 3)]) == []
    assert pools.pool_points_problems([("a", 2), ("a", 1.5), ("", 9), ("b", 1), ("b", 4)]) == [
        "Every exercise in pool “a” must carry the same points (found 1.5, 2).",
        "Every exercise in pool “b” must carry the same points (found 1, 4).",
    ]


# --- drawing and storing ---------------------------------------------------------------


def test_each_student_is_given_one_item_of_the_pool_stored_at_first_sight(
    client, assignment, pooled, students
):
    others = [item.pk for item in items_of(assignment) if not item.pool]
    for student in students:
        client.force_login(student)
        assert not PoolDraw.objects.filter(student=student).exists()
        shown = listed_item_ids(client, assignment)
        drawn = expected_pick(assignment, student, "p1", pooled)
        assert shown == sorted([drawn.pk] + others, key=[i.pk for i in items_of(assignment)].index)
        assert list(PoolDraw.objects.filter(student=student).values_list("pool", "item_id")) == [("p1", drawn.pk)]
        assert listed_item_ids(client, assignment) == shown  # a reload: the same


def test_a_stored_draw_wins_over_a_changed_pool(client, assignment, pooled, students):
    student = students[0]
    client.force_login(student)
    drawn = PoolDraw.objects.get(pk=PoolDraw.objects.create(
        assignment=assignment, student=student, pool="p1", item=pooled[2]
    ).pk).item
    # The pool is edited: a new member at the front, and the draw would differ now.
    pooled[0].position = 0
    pooled[0].save()
    assert pooled[2].pk in listed_item_ids(client, assignment)
    assert {pooled[0].pk, pooled[1].pk}.isdisjoint(listed_item_ids(client, assignment))
    assert PoolDraw.objects.filter(student=student).count() == 1
    assert drawn == pooled[2]


def test_a_second_draw_of_the_same_pool_is_refused_by_the_database(assignment, pooled, students):
    PoolDraw.objects.create(assignment=assignment, student=students[0], pool="p1", item=pooled[0])
    with pytest.raises(IntegrityError):
        PoolDraw.objects.create(assignment=assignment, student=students[0], pool="p1", item=pooled[1])


def test_a_racing_first_view_reads_the_stored_draw(assignment, pooled, students):
    """The other request stored its draw between our read and our write: ours reads it."""
    student = students[0]
    PoolDraw.objects.create(assignment=assignment, student=student, pool="p1", item=pooled[1])
    draws = pools.pool_draws_ensure(assignment=assignment, student=student, items=items_of(assignment), stored={})
    assert draws == {"p1": pooled[1].pk}
    assert PoolDraw.objects.filter(student=student).count() == 1


def test_opening_a_pool_item_first_draws_and_another_member_is_404(client, assignment, pooled, students):
    student = students[1]
    client.force_login(student)
    drawn = expected_pick(assignment, student, "p1", pooled)
    not_given = [item for item in pooled if item != drawn]
    assert client.get(reverse("exercise", args=[not_given[0].pk])).status_code == 404
    assert PoolDraw.objects.get(student=student).item == drawn
    assert client.get(reverse("exercise", args=[drawn.pk])).status_code == 200
    assert client.get(reverse("api:exercise", args=[drawn.pk])).status_code == 200
    for item in not_given:
        assert client.get(reverse("exercise", args=[item.pk])).status_code == 404
        assert client.post(reverse("practice_start", args=[item.pk])).status_code == 404
        assert client.get(reverse("api:exercise", args=[item.pk])).status_code == 404
        assert client.post(
            reverse("api:submit", args=[item.pk, "weights"]), {"answer": "1"}, content_type="application/json"
        ).status_code == 404


def test_submitting_to_a_variant_of_an_item_not_given_is_404(client, assignment, pooled, students):
    student = students[1]
    drawn = expected_pick(assignment, student, "p1", pooled)
    not_given = next(item for item in pooled if item != drawn)
    # A variant from before the item joined the pool (the pool was edited since).
    variant = variant_get_or_create_for_item(item=not_given, student=student)
    pools.pool_draws_ensure(assignment=assignment, student=student, items=items_of(assignment))
    client.force_login(student)
    part = variant.exercise_version.spec["parts"][0]["key"]
    response = client.post(reverse("submit", args=[variant.pk, part]), {"answer": "1"})
    assert response.status_code == 404
    assert not variant.submissions.exists()


def test_staff_open_every_pool_item_and_draw_nothing(client, demo, pooled):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="instructor"))
    for item in pooled:
        assert client.get(reverse("exercise", args=[item.pk])).status_code == 200
    assert not PoolDraw.objects.exists()


def test_the_dashboard_counts_a_pool_once_and_draws_nothing(client, assignment, pooled, students):
    client.force_login(students[0])
    response = client.get(reverse("dashboard"))
    summary = next(
        s for course in response.context["courses"] for s in course["assignments"] if s["assignment"] == assignment
    )
    assert summary["total"] == len(items_of(assignment)) - 2
    assert not PoolDraw.objects.exists()


# --- order ----------------------------------------------------------------------------


def test_shuffled_order_is_the_students_own_and_stable(client, assignment, students):
    assignment.shuffle_items = True
    assignment.save()
    items = items_of(assignment)
    orders = []
    for student in students:
        client.force_login(student)
        shown = listed_item_ids(client, assignment)
        expected = engine.shuffled_slots(
            secret="test-variant-seed-secret", course=assignment.course.slug, assignment=assignment.slug,
            student=str(student.pk), slots=[f"item:{item.pk}" for item in items],
        )
        assert shown == [int(slot.split(":")[1]) for slot in expected]
        assert sorted(shown) == sorted(item.pk for item in items)
        assert listed_item_ids(client, assignment) == shown
        orders.append(shown)
    assert len({tuple(order) for order in orders}) == 3


def test_without_shuffle_the_order_is_the_assignments(client, assignment, students):
    client.force_login(students[0])
    assert listed_item_ids(client, assignment) == [item.pk for item in items_of(assignment)]


def test_a_pool_moves_as_one_slot_in_the_shuffle(client, assignment, pooled, students):
    assignment.shuffle_items = True
    assignment.save()
    student = students[2]
    client.force_login(student)
    items = items_of(assignment)
    drawn = expected_pick(assignment, student, "p1", pooled)
    slots = ["pool:p1"] + [f"item:{item.pk}" for item in items if not item.pool]
    expected = engine.shuffled_slots(
        secret="test-variant-seed-secret", course=assignment.course.slug, assignment=assignment.slug,
        student=str(student.pk), slots=slots,
    )
    shown = [drawn.pk if slot == "pool:p1" else int(slot.split(":")[1]) for slot in expected]
    assert listed_item_ids(client, assignment) == shown
    api = client.get(reverse("api:assignment", args=[assignment.course.slug, assignment.slug])).json()
    assert [row["id"] for row in api["exercises"]] == shown
    assert api["total"] == len(shown)


def test_points_out_of_counts_each_pool_once(assignment, pooled):
    items = items_of(assignment)
    outside = sum(item.points for item in items if not item.pool)
    assert pools.slot_points(items) == outside + 2.0
    assert pools.points_out_of(items=items, draws={"p1": pooled[1].pk}) == outside + 2.0
    assert pools.slot_count(items) == len(items) - 2
    AssignmentItem.objects.filter(pk=pooled[0].pk).update(points=5.0)
    items = items_of(assignment)
    assert pools.points_out_of(items=items, draws={"p1": pooled[1].pk}) == outside + 2.0
    assert pools.points_out_of(items=items, draws={"p1": pooled[0].pk}) == outside + 5.0


def test_a_course_copy_keeps_the_pools_and_the_shuffle_but_no_draws(demo, assignment, pooled, students):
    from courses.services import course_copy

    assignment.shuffle_items = True
    assignment.save()
    pools.student_items(assignment=assignment, student=students[0])
    instructor = assignment.course.enrolments.filter(role="instructor").first().user
    copy = course_copy(source=assignment.course, actor=instructor, slug="attn-next", title="Next term")
    copied = copy.assignments.get(slug=assignment.slug)
    assert copied.shuffle_items is True
    assert [(item.pool, item.points) for item in items_of(copied)] == [
        (item.pool, item.points) for item in items_of(assignment)
    ]
    assert not PoolDraw.objects.filter(assignment=copied).exists()
