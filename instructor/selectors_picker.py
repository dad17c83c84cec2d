"""The assignment editor's exercise picker: which exercises an instructor may add, with what
people choose by (title, skills, topics, difficulty, size), filtered by a search (reads only).

What may be assigned is one rule, ``assignable_versions``: the published versions, which
form the shared library every course reaches. A course's drafts and versions in review
(its private work) are never offered, to it or to any other course. The picker offers
each exercise once, as its latest published version; the item's version can be switched
afterwards on the assignment page.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.http import Http404

from authoring.models import ExerciseOwner
from courses.models import Assignment
from exercises.engine.skills import SKILL_SLUGS, SKILLS
from exercises.models import ExerciseVersion, VersionStatus
from exercises.specs import version_spec

MAX_QUERY_LENGTH = 100

# Where an exercise comes from, as the picker filters by it: the bank (no owner), this
# course's own, or another course's published exercise (its course is not named).
SOURCES = {"course": "This course's", "bank": "The bank's", "other": "Other courses'"}
SOURCE_LABELS = {"course": "this course's", "bank": "from the bank", "other": "another course's"}


@dataclass(frozen=True)
class PickerRow:
    version: ExerciseVersion
    title: str
    slug: str
    skills: tuple[str, ...]  # skill slugs, in the vocabulary's order
    topics: tuple[str, ...]
    difficulty: str
    part_count: int
    in_assignment: bool
    source: str = "bank"  # a key of SOURCES

    @property
    def source_label(self) -> str:
        return SOURCE_LABELS[self.source]

    @property
    def skill_labels(self) -> list[str]:
        return [SKILLS[slug].label for slug in self.skills]

    def matches(self, *, query: str, skill: str, source: str = "") -> bool:
        """Whether the row fits the search: ``skill`` (a slug) and ``source`` exactly, and
        every word of ``query`` somewhere in the title, slug, a skill (slug or label) or a topic."""
        if skill and skill not in self.skills:
            return False
        if source and source != self.source:
            return False
        haystack = " ".join((self.title, self.slug, *self.skills, *self.skill_labels, *self.topics)).casefold()
        return all(word in haystack for word in query.casefold().split())


def assignable_versions() -> QuerySet[ExerciseVersion]:
    """Every exercise version an assignment may use (the one rule the pickers share)."""
    return ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED).select_related("exercise")


def _exercise_skills(version: ExerciseVersion) -> tuple[str, ...]:
    spec = version_spec(version)
    declared = set(spec.skills)
    for part in spec.parts:
        declared.update(part.skills)
    return tuple(slug for slug in SKILL_SLUGS if slug in declared)


def _picker_row(version: ExerciseVersion, *, present: set[int], source: str) -> PickerRow:
    spec = version_spec(version)
    return PickerRow(
        version=version,
        title=version.title,
        slug=version.exercise.slug,
        skills=_exercise_skills(version),
        topics=tuple(spec.topics),
        difficulty=spec.difficulty,
        part_count=len(spec.parts),
        in_assignment=version.exercise_id in present,
        source=source,
    )


def _sources(*, exercise_ids, course_id: int) -> dict[int, str]:
    """Each exercise's source (see SOURCES), with one query for the owners."""
    owners = dict(ExerciseOwner.objects.filter(exercise_id__in=exercise_ids).values_list("exercise_id", "course_id"))
    return {
        exercise_id: "bank" if exercise_id not in owners else "course" if owners[exercise_id] == course_id else "other"
        for exercise_id in exercise_ids
    }


def exercise_picker_rows(
    *, assignment: Assignment, query: str = "", skill: str = "", source: str = ""
) -> list[PickerRow]:
    """The latest published version of each exercise that fits the search, by title then slug."""
    query = (query or "")[:MAX_QUERY_LENGTH]
    present = set(assignment.items.values_list("exercise_version__exercise_id", flat=True))
    latest: dict[int, ExerciseVersion] = {}
    for version in assignable_versions().order_by("exercise_id", "-number"):
        latest.setdefault(version.exercise_id, version)
    sources = _sources(exercise_ids=list(latest), course_id=assignment.course_id)
    rows = [_picker_row(version, present=present, source=sources[exercise_id]) for exercise_id, version in latest.items()]
    rows = [row for row in rows if row.matches(query=query, skill=skill, source=source)]
    return sorted(rows, key=lambda row: (row.title.casefold(), row.slug))


def picker_skill_options() -> list[tuple[str, str]]:
    """(slug, label) of every skill, for the filter."""
    return [(slug, SKILLS[slug].label) for slug in SKILL_SLUGS]


def access_assignable_version(*, version_id: int) -> ExerciseVersion:
    """An assignable version by id; 404 for a draft, a version in review, or no such id
    (another course's private work is not even confirmed to exist)."""
    version = assignable_versions().filter(pk=version_id).first()
    if version is None:
        raise Http404("No such published exercise version.")
    return version
