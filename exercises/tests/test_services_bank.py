"""Loading the bank into the database: idempotent, and published versions never change."""

import shutil

import pytest
from django.core.exceptions import ValidationError

from exercises import engine
from exercises.models import ExerciseVersion, VersionStatus
from exercises.services_bank import BANK_DIRECTORY, bank_load, bank_validate

ONE_FILE = "attention-weights-one-query.yaml"


@pytest.fixture
def bank_copy(tmp_path):
    shutil.copy(BANK_DIRECTORY / ONE_FILE, tmp_path / ONE_FILE)
    return tmp_path


@pytest.mark.django_db
def test_loading_twice_changes_nothing_the_second_time(bank_copy):
    first = bank_load(directory=bank_copy)
    assert [(v.exercise.slug, v.number, v.status) for v in first] == [
        ("attention-weights-one-query", 1, VersionStatus.PUBLISHED)
    ]
    assert bank_load(directory=bank_copy) == []
    assert ExerciseVersion.objects.count() == 1


@pytest.mark.django_db
def test_a_changed_file_becomes_a_new_version_and_the_old_one_is_untouched(bank_copy):
    (original,) = bank_load(directory=bank_copy)
    path = bank_copy / ONE_FILE
    path.write_text(path.read_text().replace("title: Attention weights", "title: The attention weights"))
    (changed,) = bank_load(directory=bank_copy)
    original.refresh_from_db()
    assert (original.number, changed.number) == (1, 2)
    assert original.spec["title"] == "Attention weights and context vector for one query"
    assert changed.spec["title"] == "The attention weights and context vector for one query"
    assert original.content_hash != changed.content_hash
    assert engine.spec_from_json(changed.spec).title == changed.spec["title"]


@pytest.mark.django_db
def test_a_published_version_refuses_to_be_edited_in_place(bank_copy):
    (version,) = bank_load(directory=bank_copy)
    version.source = version.source + "\n# edited"
    with pytest.raises(ValidationError):
        version.save()


@pytest.mark.django_db
def test_an_invalid_file_stops_the_whole_load(bank_copy):
    (bank_copy / "broken.yaml").write_text("slug: broken\ntitle: Broken\n")
    with pytest.raises(engine.SpecError) as caught:
        bank_load(directory=bank_copy)
    assert str(caught.value).startswith("line 1: broken.yaml: missing required field 'version'\nline 1: broken.yaml: missing required field 'parameters'")
    assert ExerciseVersion.objects.count() == 0


def test_validation_counts_accepted_seeds_and_rejection_reasons(bank_copy):
    seen = []
    (report,) = bank_validate(seeds=4, directory=bank_copy, progress=lambda slug, done, total: seen.append(done))
    assert (report.slug, report.seeds, report.accepted, report.unusable_seeds) == ("attention-weights-one-query", 4, 4, 0)
    assert report.passed and report.failures == []
    assert report.named_variants == 1
    assert report.redraws == sum(report.reasons.values())
    assert seen == [1, 2, 3, 4]


@pytest.mark.django_db
def test_load_bank_command_reports_what_changed(bank_copy):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("load_bank", directory=bank_copy, stdout=out)
    call_command("load_bank", directory=bank_copy, stdout=out)
    assert out.getvalue().splitlines() == [
        "published attention-weights-one-query v1",
        "1 new version(s), 0 unchanged",
        "0 new version(s), 1 unchanged",
    ]


def test_validate_bank_command_fails_when_an_exercise_fails(tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    (tmp_path / "never.yaml").write_text(
        "slug: never\ntitle: Never valid\nversion: 1\n"
        "parameters:\n  a: {generator: int_range, min: 0, max: 3}\n"
        'prompt: "Give {{a}}."\n'
        "gates:\n  max_attempts: 3\n  checks:\n    - {kind: require, expr: \"a > 5\", reason: impossible}\n"
        "parts:\n  - {key: a, type: numeric, answer: a, decimals: 0, solution: done}\n"
    )
    with pytest.raises(CommandError, match=r"^1 exercise\(s\) failed: never$"):
        call_command("validate_bank", seeds=2, directory=tmp_path, stdout=StringIO())


def test_validation_fails_a_named_variant_whose_figure_cannot_be_shown(tmp_path):
    # Drawn seeds are redrawn past such a figure; a named variant is used as written.
    (tmp_path / "flat.yaml").write_text(
        "slug: flat\ntitle: Flat\nversion: 1\n"
        "parameters:\n  n: {generator: int_range, min: 1, max: 3}\n"
        'prompt: "Read it."\n'
        "figures:\n  - {heatmap: \"ones(n, 2)\"}\n"
        "parts:\n  - {key: a, type: numeric, answer: n, decimals: 0, solution: done}\n"
        "variants:\n  empty: {n: 0}\n"
    )
    (report,) = bank_validate(seeds=2, directory=tmp_path)
    assert (report.accepted, report.failure_count) == (2, 1)
    assert report.failures == [
        "variant empty: figure `heatmap: ones(n, 2)` (line 8): the heatmap cannot be shown: it is an empty 0×2 matrix"
    ]
