"""The built-in question bank: loading its YAML files as published exercise versions,
and validating every exercise over many seeds before it reaches students.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from . import engine
from .engine.selftest import self_test_variant
from .models import Exercise, ExerciseVersion, VersionStatus

BANK_DIRECTORY = Path(__file__).resolve().parent / "bank"
MAX_LISTED_FAILURES = 5


@dataclass(frozen=True)
class BankFile:
    path: Path
    source: str
    spec: engine.ExerciseSpec

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def bank_files_read(*, directory: Path = BANK_DIRECTORY) -> list[BankFile]:
    """Every bank file, parsed and validated; raises SpecError naming the file on any problem."""
    files, problems = [], []
    for path in sorted(Path(directory).glob("*.yaml")):
        source = path.read_text(encoding="utf-8")
        try:
            spec = engine.load_spec(source)
        except engine.SpecError as error:
            problems += [engine.SpecIssue(i.line, f"{path.name}: {i.path}".rstrip(": "), i.message) for i in error.errors]
            continue
        if spec.slug != path.stem:
            problems.append(engine.SpecIssue(None, path.name, f"slug '{spec.slug}' must match the file name"))
            continue
        files.append(BankFile(path=path, source=source, spec=spec))
    if problems:
        raise engine.SpecError(problems)
    return files


def bank_load(*, directory: Path = BANK_DIRECTORY, user=None) -> list[ExerciseVersion]:
    """Publish every new or changed bank file as a new version; returns the versions created.

    Idempotent: a file whose content hash equals its exercise's latest version changes
    nothing. Published versions are never edited; a changed file gets the next number.
    All files are validated before anything is written, and the writes are one transaction.
    """
    files = bank_files_read(directory=directory)
    created = []
    with transaction.atomic():
        for bank_file in files:
            version = _version_create_if_changed(bank_file=bank_file, user=user)
            if version is not None:
                created.append(version)
    return created


def _version_create_if_changed(*, bank_file: BankFile, user) -> ExerciseVersion | None:
    spec = bank_file.spec
    exercise, _ = Exercise.objects.get_or_create(
        slug=spec.slug, defaults={"title": spec.title, "created_by": user}
    )
    latest = exercise.versions.order_by("-number").first()
    if latest is not None and latest.content_hash == bank_file.content_hash:
        return None
    if exercise.title != spec.title:
        exercise.title = spec.title
        exercise.save(update_fields=["title"])
    return ExerciseVersion.objects.create(
        exercise=exercise,
        number=(latest.number + 1) if latest else 1,
        source=bank_file.source,
        spec=engine.spec_to_json(spec),
        content_hash=bank_file.content_hash,
        status=VersionStatus.PUBLISHED,  # bank files are reviewed content
        created_by=user,
        published_at=timezone.now(),
    )


@dataclass
class ExerciseValidation:
    slug: str
    seeds: int = 0
    accepted: int = 0
    unusable_seeds: int = 0  # no acceptable variant within the redraw cap
    redraws: int = 0
    max_attempts: int = 0
    reasons: Counter = field(default_factory=Counter)
    named_variants: int = 0
    checks: int = 0
    failures: list[str] = field(default_factory=list)
    failure_count: int = 0
    skipped: set[str] = field(default_factory=set)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.failure_count == 0 and self.unusable_seeds == 0

    def add_failures(self, failures: list[str], where: str) -> None:
        self.failure_count += len(failures)
        room = MAX_LISTED_FAILURES - len(self.failures)
        self.failures += [f"{where}: {failure}" for failure in failures[:max(room, 0)]]


def bank_validate(
    *,
    seeds: int = 200,
    directory: Path = BANK_DIRECTORY,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[ExerciseValidation]:
    """Draw ``seeds`` variants of every bank exercise (plus its named variants), apply the
    gates and self-test each one: reference answers graded right, generated wrong answers
    graded wrong, malformed answers reported as malformed."""
    if seeds < 1:
        raise ValueError("seeds must be at least 1")
    return [
        exercise_validate(spec=bank_file.spec, seeds=seeds, progress=progress)
        for bank_file in bank_files_read(directory=directory)
    ]


def exercise_validate(
    *, spec: engine.ExerciseSpec, seeds: int, progress: Callable[[str, int, int], None] | None = None
) -> ExerciseValidation:
    report = ExerciseValidation(slug=spec.slug, seeds=seeds)
    started = time.perf_counter()
    for seed in range(seeds):
        _validate_seed(spec, seed, report)
        if progress:
            progress(spec.slug, seed + 1, seeds)
    for name in spec.variants:
        draw = engine.draw_variant(spec, 0, name=name)
        # Drawn seeds are redrawn past a figure that cannot be shown; a named variant is not.
        report.add_failures([str(problem) for problem in engine.figure_problems(spec, draw.params)], f"variant {name}")
        _self_test(spec, draw.params, report, where=f"variant {name}")
        report.named_variants += 1
    report.seconds = time.perf_counter() - started
    return report


def _validate_seed(spec: engine.ExerciseSpec, seed: int, report: ExerciseValidation) -> None:
    try:
        draw = engine.draw_variant(spec, seed)
    except engine.VariantError as error:
        report.unusable_seeds += 1
        report.reasons.update(_reason_kind(reason) for reason in error.rejections)
        report.add_failures([str(error)], f"seed {seed}")
        return
    report.accepted += 1
    report.redraws += len(draw.rejections)
    report.max_attempts = max(report.max_attempts, draw.attempts)
    report.reasons.update(_reason_kind(reason) for reason in draw.rejections)
    _self_test(spec, draw.params, report, where=f"seed {seed}")


def _self_test(spec, params: dict, report: ExerciseValidation, *, where: str) -> None:
    try:
        result = self_test_variant(spec, params)
    except Exception as error:  # a crash is a failure of this exercise, not of the run
        report.add_failures([f"self-test crashed: {error!r}"], where)
        return
    report.checks += result.checked
    report.skipped.update(result.skipped)
    report.add_failures(result.failures, where)


def _reason_kind(reason: str) -> str:
    return reason.split(":", 1)[0]
