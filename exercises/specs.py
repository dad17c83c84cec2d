"""The engine's spec of a stored exercise version, built once per process per content.

Building a spec re-validates it and compiles its expressions (about a millisecond),
and one page or one grading needs it several times. A version's content hash changes
whenever its source does, so (id, hash) identifies the spec exactly.
"""

from __future__ import annotations

from . import engine
from .models import ExerciseVersion

MAX_CACHED_SPECS = 512
_specs: dict[tuple[int, str], engine.ExerciseSpec] = {}


def version_spec(version: ExerciseVersion) -> engine.ExerciseSpec:
    key = (version.pk, version.content_hash)
    spec = _specs.get(key)
    if spec is None or version.pk is None:
        spec = engine.spec_from_json(version.spec)
        if len(_specs) >= MAX_CACHED_SPECS:
            _specs.clear()
        if version.pk is not None:
            _specs[key] = spec
    return spec


def variant_references(variant) -> dict[str, object]:
    """The variant's reference answers (``engine.reference_answers``), computed once per
    variant object: a page reads them for its parts, its heatmaps and its feedback. A
    variant's params never change, so the copy kept on the object stays right."""
    cached = vars(variant).get("_references")
    if cached is None:
        cached = engine.reference_answers(version_spec(variant.exercise_version), variant.params)
        variant._references = cached
    return cached


def part_label(spec: engine.ExerciseSpec, key: str) -> str:
    """A part as people name it: "(a)", "(b)", … in the exercise's order ("(?)" for a key
    the spec no longer has). Pages show this, never the part's key."""
    keys = [part.key for part in spec.parts]
    if key not in keys:
        return "(?)"
    index = keys.index(key)
    return f"({chr(ord('a') + index)})" if index < 26 else f"({index + 1})"
