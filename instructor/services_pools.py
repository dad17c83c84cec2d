"""Adding a pool of interchangeable exercises to an assignment in one step."""

from __future__ import annotations

from django.db import transaction

from courses.models import Assignment, AssignmentItem
from exercises.models import ExerciseVersion

from . import selectors_edit_impact
from .services import InstructorRefused, _require_items_change_confirmed, assignment_item_add

MIN_POOL_SIZE = 2


@transaction.atomic
def assignment_pool_add(
    *, assignment: Assignment, versions: list[ExerciseVersion], pool: str, points: float, confirmed: bool | str = True
) -> list[AssignmentItem]:
    """Add ``versions`` as new items sharing the pool ``pool``, each worth ``points``.

    Refuses (adding nothing) fewer than two exercises, a pool name the assignment already
    uses, and anything ``assignment_item_add`` refuses (an archived course, an unpublished
    version, an exercise already in the assignment). Unless ``confirmed`` (services.Confirmed)
    once students have started: ConfirmationNeeded, naming who the pool reaches."""
    pool = pool.strip()
    if not pool:
        raise InstructorRefused("Give the pool a name.")
    # Lock the assignment's items so two instructors cannot create the same pool at once.
    existing = list(AssignmentItem.objects.select_for_update().filter(assignment=assignment))
    if any(item.pool == pool for item in existing):
        raise InstructorRefused(f"This assignment already has a pool called '{pool}'; choose another name.")
    if len(versions) < MIN_POOL_SIZE:
        raise InstructorRefused(f"A pool needs at least {MIN_POOL_SIZE} exercises; the bank offers {len(versions)} here.")
    _require_items_change_confirmed(
        assignment=assignment, confirmed=confirmed,
        sentence=lambda reached: selectors_edit_impact.pool_add_sentence(
            reached, pool=pool, count=len(versions), points=points
        ),
        change={
            "edit": "pool_add", "pool": pool, "versions": [version.pk for version in versions], "points": points,
        },
    )
    items = []
    for version in versions:
        item = assignment_item_add(assignment=assignment, version=version, points=points)
        item.pool = pool
        item.save(update_fields=["pool"])
        items.append(item)
    return items
