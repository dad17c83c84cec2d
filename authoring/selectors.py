"""Reads for authoring: which exercises a course's staff may see, previews, variant tests.

``access_*`` functions fetch *with* the permission check. Rules:

* Only a course's staff (instructors and teaching assistants) reach authoring pages;
  a student of the course gets 403, anyone not enrolled 404.
* An exercise created in the browser belongs to one course. That course's staff see
  every version of it (drafts included); other courses' staff see only its published
  and retired versions, as part of the shared library, and never its drafts (404).
* Teaching assistants read, preview, test and comment; only instructors edit, send to
  review, approve, retire or import.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404

from courses.models import Course, Enrolment, EnrolmentStatus, Role
from courses.selectors import access_course, require_staff
from exercises import engine
from exercises.engine import fairness
from exercises.models import Exercise, ExerciseVersion, VersionStatus

from .models import CourseReviewSetting, ExerciseEvent, SecondReviewer

LIBRARY_STATUSES = (VersionStatus.PUBLISHED, VersionStatus.RETIRED)
VARIANT_TEST_COUNT = 100
VARIANT_TEST_SECONDS = 20.0  # the test stops itself between seeds after this long
CHECK_SEEDS = 10  # "Check and preview" and saving try seeds 0..9 and every named variant
# Author-controlled work runs in the sandbox's checker processes with these limits, so no
# source can hold a web thread however its gates and derived parameters behave.
CHECK_LIMITS = {"cpu_seconds": 8.0, "wall_seconds": 10.0, "memory_mb": 512}
PREVIEW_LIMITS = {"cpu_seconds": 4.0, "wall_seconds": 5.0, "memory_mb": 512}
VARIANT_TEST_LIMITS = {"cpu_seconds": 22.0, "wall_seconds": 25.0, "memory_mb": 1024}


class Action:
    VIEW = "view"  # read, preview, test, export
    COMMENT = "comment"
    EDIT = "edit"  # edit, send to review, return to draft, approve, retire


@dataclass(frozen=True)
class VersionAccess:
    course: Course
    role: str
    version: ExerciseVersion
    owned: bool  # the exercise belongs to this course

    @property
    def exercise(self) -> Exercise:
        return self.version.exercise


def require_instructor(*, role: str | None) -> None:
    if role != Role.INSTRUCTOR:
        raise PermissionDenied("Only the course's instructors may do this.")


def access_authoring(*, user, course_slug: str, action: str = Action.VIEW) -> tuple[Course, str]:
    """The course whose exercises the user works on, and their role; staff only."""
    course, role = access_course(user=user, slug=course_slug)
    require_staff(role=role)
    if action == Action.EDIT:
        require_instructor(role=role)
    return course, role


def exercise_is_owned(*, exercise: Exercise, course: Course) -> bool:
    owner = getattr(exercise, "owner", None)
    return owner is not None and owner.course_id == course.pk


def versions_visible(*, exercise: Exercise, course: Course) -> QuerySet[ExerciseVersion]:
    versions = exercise.versions.select_related("created_by").order_by("-number")
    if exercise_is_owned(exercise=exercise, course=course):
        return versions
    return versions.filter(status__in=LIBRARY_STATUSES)


def access_exercise(
    *, user, course_slug: str, slug: str, action: str = Action.VIEW
) -> tuple[Course, str, Exercise, bool]:
    course, role = access_authoring(user=user, course_slug=course_slug)
    exercise = Exercise.objects.select_related("owner").filter(slug=slug).first()
    if exercise is None or not versions_visible(exercise=exercise, course=course).exists():
        raise Http404("No such exercise.")
    owned = exercise_is_owned(exercise=exercise, course=course)
    _require_action(role=role, owned=owned, action=action)
    return course, role, exercise, owned


def access_version(
    *, user, course_slug: str, slug: str, number: int, action: str = Action.VIEW
) -> VersionAccess:
    course, role, exercise, owned = access_exercise(user=user, course_slug=course_slug, slug=slug)
    version = versions_visible(exercise=exercise, course=course).filter(number=number).first()
    if version is None:
        raise Http404("No such version.")
    _require_action(role=role, owned=owned, action=action)
    return VersionAccess(course=course, role=role, version=version, owned=owned)


def _require_action(*, role: str, owned: bool, action: str) -> None:
    if action == Action.VIEW:
        return
    if not owned:
        raise PermissionDenied(
            "This exercise belongs to another course (or to the built-in bank); "
            "only its own course's staff may change or review it."
        )
    if action == Action.EDIT:
        require_instructor(role=role)


def exercises_for_course(*, course: Course) -> list[dict]:
    """The course's own exercises (all statuses) and the library's published ones."""
    exercises = (
        Exercise.objects.filter(
            Q(owner__course=course) | Q(versions__status__in=LIBRARY_STATUSES)
        )
        .select_related("owner")
        .distinct()
        .order_by("slug")
    )
    rows = []
    for exercise in exercises:
        versions = list(versions_visible(exercise=exercise, course=course))
        if not versions:
            continue
        rows.append(
            {
                "exercise": exercise,
                "owned": exercise_is_owned(exercise=exercise, course=course),
                "latest": versions[0],
                "published": next(
                    (v for v in versions if v.status == VersionStatus.PUBLISHED), None
                ),
            }
        )
    rows.sort(key=lambda row: (not row["owned"], row["exercise"].slug))
    return rows


def course_instructor_count(*, course: Course) -> int:
    return Enrolment.objects.filter(
        course=course, role=Role.INSTRUCTOR, status=EnrolmentStatus.ACTIVE
    ).count()


def second_reviewer_setting(*, course: Course) -> str:
    stored = CourseReviewSetting.objects.filter(course=course).values_list("second_reviewer", flat=True).first()
    return stored or SecondReviewer.AUTO


def second_reviewer_required(*, course: Course | None) -> bool:
    """Whether publishing a version of this course needs an instructor other than its
    author: always, never, or (the default) when the course has more than one instructor.
    Library exercises (no course) always need one."""
    if course is None:
        return True
    setting = second_reviewer_setting(course=course)
    if setting == SecondReviewer.AUTO:
        return course_instructor_count(course=course) > 1
    return setting == SecondReviewer.ALWAYS


def versions_in_review(*, course: Course) -> QuerySet[ExerciseVersion]:
    return ExerciseVersion.objects.filter(
        exercise__owner__course=course, status=VersionStatus.IN_REVIEW
    ).select_related("exercise", "created_by")


def exercise_history(*, exercise: Exercise) -> QuerySet[ExerciseEvent]:
    return exercise.events.select_related("actor")


def published_versions() -> QuerySet[ExerciseVersion]:
    """Every version an assignment may use."""
    return ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED).select_related(
        "exercise"
    ).order_by("exercise__slug", "-number")


# ---------------------------------------------------------------------------
# Preview and variant tests (pure engine work on a validated spec)
# ---------------------------------------------------------------------------


def gate_verdicts(spec: engine.ExerciseSpec, params: dict) -> list[dict]:
    """Each quality gate's verdict on these parameters, the built-in checks first."""
    from exercises.engine.variants import first_failed_gate

    builtin = "built-in: finite, clear of rounding boundaries, not saturated" + (", figures shown" if spec.figures else "")
    checks = [(builtin, dataclasses.replace(spec, gates=()))]
    for gate in spec.gates:
        checks.append(
            (f"{gate.kind}: {gate.expression.text}", dataclasses.replace(spec, parts=(), gates=(gate,), figures=()))
        )
    verdicts = []
    for label, single in checks:
        try:
            problem = first_failed_gate(single, params)
        except (engine.ExpressionError, ValueError, KeyError) as exc:
            problem = f"could not evaluate: {exc}"
        verdicts.append({"label": label, "passed": problem is None, "problem": problem or ""})
    return verdicts


def _limited(func, limits: dict, **kwargs):
    """``func(**kwargs)`` in a sandboxed checker process; a limit or a crash becomes
    ``SourceCheckStopped`` with a message for the author."""
    from grading.core.sandbox import SandboxError, SandboxLimitExceeded, run_limited

    try:
        return run_limited(func, **kwargs, **limits)
    except SandboxLimitExceeded as limit:
        raise SourceCheckStopped(
            f"Stopped: this exercise needed more than the {limits['wall_seconds']:g} s "
            f"(or {limits['memory_mb']} MB) allowed ({limit}). Look for gates that reject "
            "almost every draw, or derived parameters that compute too much."
        ) from None
    except SandboxError as problem:
        raise SourceCheckStopped(f"The exercise could not be checked: {problem}") from None


class SourceCheckStopped(Exception):
    """A check, preview or variant test was stopped by its time or memory limit."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def source_check(*, source: str, seed: int = 0) -> dict:
    """Read an exercise source and try it the way students will get it, under limits.

    Returns ``errors`` (SpecIssues, line-precise) if it cannot be read; otherwise
    ``failure``: None when seeds 0..CHECK_SEEDS-1 and every named variant draw past the
    gates and render, else which failed; ``problems``: why draws were refused, each
    cause once (``engine.CountedDrawProblem``: the parameter, part or gate, its field and
    line, and how many of the draws it refused); and ``preview`` of ``seed``.
    """
    try:
        return _limited(_source_check, CHECK_LIMITS, source=source, seed=seed)
    except SourceCheckStopped as stopped:
        return {"errors": [], "failure": stopped.message, "problems": [], "preview": None}


def source_check_issues(checked: dict) -> list[engine.SpecIssue]:
    """Everything wrong with a checked source as line-precise issues: the file's own
    problems, or the failed draws (the headline first, then each cause with its line)."""
    if checked["errors"]:
        return list(checked["errors"])
    if not checked["failure"]:
        return []
    return [engine.SpecIssue(None, "", checked["failure"])] + [problem.as_issue() for problem in checked["problems"]]


def _source_check(*, source: str, seed: int) -> dict:
    try:
        spec = engine.load_spec(source)
    except engine.SpecError as error:
        return {"errors": error.errors, "failure": None, "problems": [], "preview": None}
    draws = engine.check_draws(spec, range(CHECK_SEEDS))
    if draws.failed_seeds:
        return {"errors": [], "failure": _failed_seeds_text(spec, draws), "problems": draws.problems,
                "preview": version_preview(spec=spec, seed=seed)}
    unrendered = _unrendered_seeds(spec, draws.params)
    if unrendered["seeds"]:
        return {"errors": [], "failure": unrendered["failure"], "problems": unrendered["problems"],
                "preview": version_preview(spec=spec, seed=seed)}
    loose = _loose_tolerance(spec, draws.params)
    if loose:
        return {"errors": [], "failure": loose, "problems": [], "preview": version_preview(spec=spec, seed=seed)}
    failure, problems = None, []
    tries = [(s, None) for s in range(CHECK_SEEDS)] + [(0, name) for name in spec.variants]
    for try_seed, name in tries:
        try:
            tried = version_preview(spec=spec, seed=try_seed, variant_name=name)
        except Exception as exc:  # any failure of the author's exercise is a finding
            tried = {"error": f"{type(exc).__name__}: {exc}"}
        if tried["error"]:
            which = f"named variant '{name}'" if name else f"seed {try_seed}"
            failure = f"The exercise does not work for {which}: {tried['error']}"
            problems = tried.get("problems") or []
            break
    return {"errors": [], "failure": failure, "problems": problems, "preview": version_preview(spec=spec, seed=seed)}


def _loose_tolerance(spec: engine.ExerciseSpec, drawn: dict[int, dict]) -> str | None:
    """The first seed's words on a declared tolerance that accepts 0 or a known wrong value
    ("Test 100 variants" says so of every variant; a save or publish stops at the first).
    ``drawn``: each seed's variant, as ``engine.check_draws`` drew it."""
    from exercises.engine.selftest import declared_tolerance_problems

    for seed, params in drawn.items():
        problems = declared_tolerance_problems(spec, params)
        if problems:
            return f"The exercise's tolerance is too loose for seed {seed}: {problems[0]}"
    return None


def _unrendered_seeds(spec: engine.ExerciseSpec, drawn: dict[int, dict]) -> dict:
    """Seeds that draw but whose text (prompt, solutions, hints, choices) has a placeholder
    that cannot be filled in, and each such placeholder once, counted over the seeds.
    ``drawn``: each seed's variant, as ``engine.check_draws`` drew it (once for every check)."""
    from exercises.engine.errors import once_per_draw
    from exercises.engine.rendering import text_problems

    seeds = list(drawn)
    failed, problems = [], []
    for seed, params in drawn.items():
        found = text_problems(spec, params)
        if found:
            failed.append(seed)
            problems += once_per_draw(found)
    span = f"{seeds[0]}–{seeds[-1]}"
    if len(failed) == len(seeds):
        which = f"any of seeds {span}"
    else:
        which = f"seed{'s' if len(failed) != 1 else ''} {', '.join(str(seed) for seed in failed)} (of {span})"
    return {
        "seeds": failed,
        "failure": f"The exercise draws, but its text does not render for {which}." if failed else None,
        "problems": engine.count_draw_problems(problems, len(seeds)),
    }


def _failed_seeds_text(spec: engine.ExerciseSpec, draws: engine.DrawCheck) -> str:
    seeds = f"{draws.seeds[0]}–{draws.seeds[-1]}"
    tries = f"in {spec.max_attempts} draw{'s' if spec.max_attempts != 1 else ''}"
    if len(draws.failed_seeds) == len(draws.seeds):
        return f"The exercise does not work: none of seeds {seeds} gives an acceptable variant {tries} each."
    if len(draws.failed_seeds) == 1:
        return f"The exercise does not work for seed {draws.failed_seeds[0]} (of {seeds}): no acceptable variant {tries}."
    failed = ", ".join(str(seed) for seed in draws.failed_seeds)
    return f"The exercise does not work for seeds {failed} (of {seeds}): no acceptable variant {tries} each."


def authoring_spec(version: ExerciseVersion) -> engine.ExerciseSpec:
    """The version's spec knowing the lines of its source, so that what fails in a
    preview or a variant test names its line."""
    from exercises.specs import version_spec

    return engine.with_source_lines(version_spec(version), version.source)


def version_preview_limited(
    *, spec: engine.ExerciseSpec, seed: int, variant_name: str | None = None
) -> dict:
    """``version_preview`` under the preview limits; a stopped preview is an ``error``."""
    try:
        return _limited(
            version_preview, PREVIEW_LIMITS, spec=spec, seed=seed, variant_name=variant_name
        )
    except SourceCheckStopped as stopped:
        return {"seed": seed, "variant_name": variant_name or "", "error": stopped.message}


# A published version's content never changes and a preview's draw is seeded, so its preview
# is the same every time; only the code that renders it may change, on a deploy: bump the
# key's version when a preview's content changes, and a day bounds what an unbumped change
# leaves behind.
PUBLISHED_PREVIEW_CACHE_SECONDS = 24 * 3600
_PUBLISHED_PREVIEW_CACHE_VERSION = 4  # 2: images only from static files; 3: warnings of dropped images; 4: named as the page renders them


def published_preview_cache_key(*, version: ExerciseVersion, seed: int) -> str:
    """The content hash is in the key, so an id handed out again (a restored or test
    database) never reads another version's preview."""
    content = version.content_hash[:16]
    return f"published-preview:{_PUBLISHED_PREVIEW_CACHE_VERSION}:{version.pk}:{content}:{seed}"


def published_version_preview(
    *, version: ExerciseVersion, seed: int, place, spec: engine.ExerciseSpec | None = None
) -> dict:
    """``version_preview_limited`` of a published (or retired) version, from the cache when
    it is there: the instructor's picker and pool pages preview the same versions again and
    again, and each miss runs the sandbox.

    ``place`` is called, and the context manager it returns entered, around the sandbox run
    only, on a miss: the caller passes the person's one place for sandbox runs
    (``services.source_check_place``), whose AuthoringRefused (code ``busy``) passes through
    with nothing run. A hit runs nothing and takes no place. The cache fails open: with Redis
    down every call is a miss.

    Only a preview without ``error`` is kept. A stop (time or memory limit, a crashed
    checker) depends on the machine's load and must not stick. A draw that fails for this
    seed would fail again, but a version is checked on seeds 0–9 when saved (the bank's
    files by their tests), so such a failure points at engine code changed since: it is
    shown fresh once that is fixed, and its reruns still hold the person's place.
    ``spec``: the version's spec when the caller has it (``authoring_spec``, whose errors
    name the source's lines).
    """
    from exercises.specs import version_spec

    if version.status not in LIBRARY_STATUSES:
        raise ValueError(f"{version} is not published: its preview may change, so it is not cached.")
    key = published_preview_cache_key(version=version, seed=seed)
    preview = cache.get(key)
    if preview is not None:
        return preview
    with place():
        preview = version_preview_limited(spec=spec or version_spec(version), seed=seed)
    if not preview.get("error"):
        cache.set(key, preview, PUBLISHED_PREVIEW_CACHE_SECONDS)
    return preview


def version_test_variants_limited(*, spec: engine.ExerciseSpec, first_seed: int = 0) -> dict:
    """``version_test_variants`` in a sandboxed process; raises SourceCheckStopped."""
    return _limited(version_test_variants, VARIANT_TEST_LIMITS, spec=spec, first_seed=first_seed)


PREFLIGHT_SEEDS = 200
SPREAD_BAR_WIDTH = 240


def version_variant_spread(*, spec: engine.ExerciseSpec, seeds: int = PREFLIGHT_SEEDS) -> dict:
    """Before any student answers: across ``seeds`` drawn variants, how close the weights
    are to uniform, how large the entries are, how many digits the answers need, and how
    often each value of a drawn parameter comes up, with bar lengths for the page."""
    def draw(spec, seed):
        try:
            return engine.draw_variant(spec, seed).params
        except (engine.VariantError, engine.ExpressionError, ValueError):
            return None

    spread = fairness.variant_spread(spec, seeds=seeds, draw=draw)
    features = [
        {"spread": feature, "chart": _spread_chart(feature.histogram)} for feature in spread["features"]
    ]
    parameters = []
    for name, counts in spread["parameters"].items():
        parameters.append({
            "name": name,
            "bars": counts[:30],
            "more": max(0, len(counts) - 30),
        })
    return {"seeds": spread["seeds"], "unusable": spread["unusable"], "features": features,
            "parameters": parameters, "bar_width": SPREAD_BAR_WIDTH}


def _spread_chart(histogram: list[tuple[str, int]], *, row: int = 22, label_width: int = 150) -> dict:
    """Geometry of a horizontal SVG bar chart of seeds per bin."""
    top = max((count for _, count in histogram), default=1) or 1
    bars = []
    for index, (label, count) in enumerate(histogram):
        length = round(SPREAD_BAR_WIDTH * count / top, 1)
        bars.append({"label": label, "count": count, "y": index * row, "text_y": index * row + 13,
                     "length": length, "value_x": round(label_width + 6 + length + 6, 1)})
    return {"bars": bars, "height": max(1, len(histogram)) * row, "width": label_width + SPREAD_BAR_WIDTH + 60,
            "label_x": label_width, "bar_x": label_width + 6}


def version_variant_spread_limited(*, spec: engine.ExerciseSpec) -> dict:
    """``version_variant_spread`` in a sandboxed process; raises SourceCheckStopped."""
    return _limited(version_variant_spread, VARIANT_TEST_LIMITS, spec=spec)


def version_preview(*, spec: engine.ExerciseSpec, seed: int, variant_name: str | None = None) -> dict:
    """What a student with this seed would see, the reference answers and the gates' verdicts,
    and ``warnings`` for the author (SpecIssues): images the page will not show.

    Never raises for a bad seed or a failing draw: the problem is returned as ``error``.
    """
    preview = {"seed": seed, "variant_name": variant_name or "", "error": None}
    try:
        draw = engine.draw_variant(spec, seed, name=variant_name)
    except engine.VariantError as exc:
        preview.update(
            error=f"No acceptable variant for seed {seed} in {len(exc.problems)} draw{'s' if len(exc.problems) != 1 else ''}.",
            problems=engine.count_draw_problems(exc.problems, len(exc.problems)),
        )
        return preview
    except engine.DrawFailed as exc:  # a named variant's fixed values do not work
        preview["error"] = str(exc.problem)
        return preview
    except (ValueError, engine.ExpressionError) as exc:
        preview["error"] = str(exc)
        return preview
    try:
        references = engine.reference_answers(spec, draw.params)
        parts = [
            {
                "key": part.key,
                "type": part.type,
                "points": part.points,
                "prompt": engine.render_part_prompt(spec, draw.params, part.key),
                "reference": _display_reference(part, references[part.key]),
                "solution": engine.render_solution(spec, draw.params, part.key),
                "choices": _preview_choices(part, references[part.key]),
            }
            for part in spec.parts
        ]
        prompt = engine.render_prompt(spec, draw.params)
        figures = engine.render_figures(spec, draw.params)
    except (engine.ExpressionError, ValueError, KeyError) as exc:
        from exercises.engine.errors import once_per_draw
        from exercises.engine.rendering import text_problems

        # A named variant is not redrawn past a figure that cannot be shown; others are.
        text, unshowable = text_problems(spec, draw.params), engine.figure_problems(spec, draw.params)
        what = "its text does not render" if text else "its figures cannot be shown"
        preview["error"] = f"The variant draws, but {what}." if text or unshowable else (
            f"the variant draws, but rendering it failed: {exc}")
        preview["problems"] = engine.count_draw_problems(once_per_draw(text + unshowable), 1)
        return preview
    from .image_warnings import image_warnings

    preview.update(
        attempts=draw.attempts,
        problems=engine.count_draw_problems(draw.problems, draw.attempts),
        warnings=image_warnings(spec, draw.params),
        params={name: _display_value(value) for name, value in draw.params.items()},
        prompt=prompt,
        figures=figures,
        parts=parts,
        gates=gate_verdicts(spec, draw.params),
    )
    return preview


def _preview_choices(part, reference) -> list[dict]:
    """A choice part's choices as the student sees them, the right one(s) marked ([] for
    any other part)."""
    if not part.choices:
        return []
    keys = reference if isinstance(reference, (list, tuple, set)) else [reference]
    right = {str(key) for key in keys}
    return [
        {"key": choice["key"], "text": choice["text"], "right": choice["key"] in right}
        for choice in part.choices
    ]


def _display_reference(part, value) -> str:
    """Numbers at the part's declared decimals, as the student would type them."""
    from exercises.engine.reference import format_value

    if part.type in ("numeric", "matrix"):
        return format_value(value, decimals=part.decimals, latex=False)
    return _display_value(value)


def _display_value(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_display_value(v) for v in value) + "]"
    return str(value)


def version_test_variants(
    *,
    spec: engine.ExerciseSpec,
    count: int = VARIANT_TEST_COUNT,
    first_seed: int = 0,
    time_budget: float = VARIANT_TEST_SECONDS,
) -> dict:
    """Draw ``count`` variants (gates and redraws as for students) and self-test each.

    The self-test is the bank validator's (``exercises.engine.selftest``): the reference
    must be accepted, generated wrong answers refused, malformed ones reported as such.
    Stops early, and says so, when the time budget runs out.
    """
    from exercises.engine.selftest import self_test_variant

    started = time.perf_counter()
    rows, rejection_reasons, problems, draws = [], {}, [], 0
    stopped_early = False
    for seed in range(first_seed, first_seed + count):
        if time.perf_counter() - started > time_budget:
            stopped_early = True
            break
        row = {"seed": seed, "attempts": 0, "problems": [], "references": [], "checked": 0}
        rows.append(row)
        try:
            draw = engine.draw_variant(spec, seed)
        except engine.VariantError as exc:
            row["attempts"] = len(exc.problems)
            row["problems"].append(f"no acceptable variant in {len(exc.problems)} draws (why: see above)")
            _count_reasons(rejection_reasons, exc.rejections)
            problems += exc.problems
            draws += len(exc.problems)
            continue
        row["attempts"] = draw.attempts
        _count_reasons(rejection_reasons, draw.rejections)
        problems += draw.problems
        draws += draw.attempts
        try:
            references = engine.reference_answers(spec, draw.params)
            result = self_test_variant(spec, draw.params)
        except Exception as exc:  # an exercise bug must show in the table, not crash the page
            row["problems"].append(f"{type(exc).__name__}: {exc}")
            continue
        row["references"] = [_display_reference(part, references[part.key]) for part in spec.parts]
        row["checked"] = result.checked
        row["problems"] += result.failures
    failed = [row for row in rows if row["problems"]]
    return {
        "rows": rows,
        "tested": len(rows),
        "requested": count,
        "passed": len(rows) - len(failed),
        "failed": len(failed),
        "mean_attempts": (sum(r["attempts"] for r in rows) / len(rows)) if rows else 0.0,
        "redraws": sum(max(0, r["attempts"] - 1) for r in rows),
        "rejection_reasons": sorted(rejection_reasons.items(), key=lambda kv: (-kv[1], kv[0])),
        "draw_problems": engine.count_draw_problems(problems, draws),
        "stopped_early": stopped_early,
        "seconds": round(time.perf_counter() - started, 2),
        "part_keys": [part.key for part in spec.parts],
    }


def _count_reasons(counter: dict, reasons: list[str]) -> None:
    for reason in reasons:
        kind = reason.split(":", 1)[0]
        counter[kind] = counter.get(kind, 0) + 1
