"""Question pools and per-student order: which items of an assignment one student is
given, and in what order.

Items of an assignment that share a non-empty ``pool`` name form one slot; each student
is given one of them, drawn from the same keyed hash as the variants (with the pool's
name in the key) and stored in ``PoolDraw`` the first time the student is shown the
assignment or opens one of its items. From then on the stored draw decides, so a later
change to the pool never changes what a student saw. The order of the slots may be
shuffled per student: that order is recomputed from the keyed hash (never stored) and so
is the same on every reload.

An assignment without pools costs no query here: everything works from the items the
caller already read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.http import Http404

from exercises import engine

from .models import Assignment, AssignmentItem, PoolDraw


def pool_items(items: Iterable[AssignmentItem]) -> dict[str, list[AssignmentItem]]:
    """The pools among ``items``: name -> its items in the assignment's order."""
    pools: dict[str, list[AssignmentItem]] = defaultdict(list)
    for item in sorted(items, key=lambda item: (item.position, item.pk)):
        if item.pool:
            pools[item.pool].append(item)
    return dict(pools)


def has_pools(items: Iterable[AssignmentItem]) -> bool:
    return any(item.pool for item in items)


def _seed_key(*, assignment: Assignment, student) -> dict:
    return {
        "secret": settings.VARIANT_SEED_SECRET,
        "course": assignment.course.slug,
        "assignment": assignment.slug,
        "student": str(student.pk),
    }


def pool_item_drawn(*, assignment: Assignment, student, pool: str, items: list[AssignmentItem]) -> AssignmentItem:
    """The item of ``pool`` (its ``items`` in order, non-empty) the keyed hash gives ``student``."""
    index = engine.pool_pick(**_seed_key(assignment=assignment, student=student), pool=pool, size=len(items))
    return items[index]


def pool_draws(*, assignment: Assignment, student_ids: Iterable[int] | None = None) -> dict[int, dict[str, int]]:
    """Stored draws, one query: student id -> {pool name: item id}."""
    draws = PoolDraw.objects.filter(assignment=assignment)
    if student_ids is not None:
        draws = draws.filter(student_id__in=list(student_ids))
    result: dict[int, dict[str, int]] = defaultdict(dict)
    for student_id, pool, item_id in draws.values_list("student_id", "pool", "item_id"):
        result[student_id][pool] = item_id
    return dict(result)


def pool_draws_ensure(
    *, assignment: Assignment, student, items: list[AssignmentItem], stored: dict[str, int] | None = None
) -> dict[str, int]:
    """The student's draw for every pool among ``items`` (pool name -> item id), drawing and
    storing any not drawn yet. Safe under concurrent first views: the unique constraint
    decides, and the loser reads the winner's row (``get_or_create`` retries the read).

    A stored draw always wins, even when its item has left the pool since."""
    pools = pool_items(items)
    if not pools:
        return {}
    if stored is None:
        stored = pool_draws(assignment=assignment, student_ids=[student.pk]).get(student.pk, {})
    draws = dict(stored)
    for pool, members in pools.items():
        if pool in draws:
            continue
        drawn = pool_item_drawn(assignment=assignment, student=student, pool=pool, items=members)
        draw, _ = PoolDraw.objects.get_or_create(
            assignment=assignment, student=student, pool=pool, defaults={"item": drawn}
        )
        draws[pool] = draw.item_id
    return draws


def items_given(*, items: Iterable[AssignmentItem], draws: dict[str, int]) -> list[AssignmentItem]:
    """The items a student with these ``draws`` was given, in the assignment's order: every
    item outside a pool, and of each pool only the drawn one (a pool not drawn yet gives
    nothing)."""
    drawn_ids = set(draws.values())
    return [
        item
        for item in sorted(items, key=lambda item: (item.position, item.pk))
        if not item.pool or item.pk in drawn_ids
    ]


def item_given(*, item: AssignmentItem, draws: dict[str, int]) -> bool:
    return not item.pool or item.pk in set(draws.values())


def slot_key(item: AssignmentItem) -> str:
    return f"pool:{item.pool}" if item.pool else f"item:{item.pk}"


def items_in_student_order(*, assignment: Assignment, student, items: list[AssignmentItem]) -> list[AssignmentItem]:
    """``items`` (one per slot) in the student's order: the assignment's order, or the
    student's own stable shuffle when the assignment shuffles."""
    if not assignment.shuffle_items:
        return items
    by_slot = {slot_key(item): item for item in items}
    order = engine.shuffled_slots(**_seed_key(assignment=assignment, student=student), slots=list(by_slot))
    return [by_slot[slot] for slot in order]


def student_items(*, assignment: Assignment, student, items: list[AssignmentItem] | None = None) -> list[AssignmentItem]:
    """The items ``student`` is given, in their order, drawing their pools on first sight.

    ``items``: the assignment's items, when the caller has read them."""
    if items is None:
        items = list(assignment.items.select_related("exercise_version__exercise"))
    draws = pool_draws_ensure(assignment=assignment, student=student, items=items)
    return items_in_student_order(
        assignment=assignment, student=student, items=items_given(items=items, draws=draws)
    )


def require_item_given(*, item: AssignmentItem, student) -> None:
    """404 when ``item`` belongs to a pool and ``student`` was given another of its items.

    Opening a pool item is a first sight of its pool: the draw is made (and stored) here if
    it was not yet. No query for an item outside a pool."""
    if not item.pool:
        return
    assignment = item.assignment
    stored = PoolDraw.objects.filter(assignment=assignment, student=student, pool=item.pool).values_list(
        "item_id", flat=True
    ).first()
    if stored is None:
        members = list(assignment.items.filter(pool=item.pool).order_by("position", "pk"))
        drawn = pool_item_drawn(assignment=assignment, student=student, pool=item.pool, items=members)
        draw, _ = PoolDraw.objects.get_or_create(
            assignment=assignment, student=student, pool=item.pool, defaults={"item": drawn}
        )
        stored = draw.item_id
    if stored != item.pk:
        raise Http404("No such exercise.")


def slot_points(items: Iterable[AssignmentItem]) -> float:
    """The points a student is scored out of: every item outside a pool, and one item per
    pool (the items of a pool carry equal points; the largest counts if they do not)."""
    items = list(items)
    pools = pool_items(items)
    return sum(item.points for item in items if not item.pool) + sum(
        max(member.points for member in members) for members in pools.values()
    )


def points_out_of(*, items: Iterable[AssignmentItem], draws: dict[str, int]) -> float:
    """The points one student with these ``draws`` is scored out of: their drawn item's
    points for a drawn pool, the pool's points for one not drawn yet."""
    items = list(items)
    given = {item.pk for item in items_given(items=items, draws=draws)}
    pools = pool_items(items)
    total = sum(item.points for item in items if not item.pool)
    for pool, members in pools.items():
        drawn = [member for member in members if member.pk in given]
        total += drawn[0].points if drawn else max(member.points for member in members)
    return total


def pool_points_problems(items: Iterable[tuple[str, float]]) -> list[str]:
    """(pool name, points) of each item -> one message per pool whose items' points differ."""
    points: dict[str, set[float]] = defaultdict(set)
    for pool, value in items:
        if pool:
            points[pool].add(float(value))
    return [
        f"Every exercise in pool “{pool}” must carry the same points (found "
        f"{', '.join(f'{value:g}' for value in sorted(values))})."
        for pool, values in sorted(points.items())
        if len(values) > 1
    ]


def slot_count(items: Iterable[AssignmentItem]) -> int:
    """How many exercises each student is given: one per item outside a pool, one per pool."""
    return len({slot_key(item) for item in items})
