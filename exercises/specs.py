"""The engine's spec of a stored exercise version, built once per process per content.

Building a spec re-validates it and compiles its expressions (about a millisecond),
and one page or one grading needs it several times. A version's content hash changes
whenever its source does, so (id, hash) identifies the spec exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


# A variant's reference answers and each part's checker options, per process: a submit,
# its grade and its result each need them (0.27 ms a part to compute for the worked
# example), and a variant's numbers never change. Keyed by the variant's id and its
# version's content; an entry is used only while its params equal the variant's (an id a
# test database hands out again holds other numbers). The values are shared: callers read
# them, never change them. An entry of the worked example holds about 10 kB (its params
# are most of it), so the bound keeps a process's copy near 10 MB; emptied when full.
MAX_CACHED_VARIANTS = 1024


@dataclass
class _VariantComputed:
    """One variant's entry. Its reference answers are computed when first asked for: a
    preview field or a staff page showing an answer needs the part's options only."""

    params: dict
    references: dict[str, object] | None = None
    options: dict[str, dict] = field(default_factory=dict)


_variants: dict[tuple[int, int, str], _VariantComputed] = {}


def _variant_computed(variant) -> _VariantComputed:
    version = variant.exercise_version
    key = (variant.pk, version.pk, version.content_hash)
    computed = _variants.get(key)
    if computed is None or computed.params != variant.params:
        computed = _VariantComputed(params=variant.params)
        if variant.pk is not None and version.pk is not None:
            if len(_variants) >= MAX_CACHED_VARIANTS:
                _variants.clear()
            _variants[key] = computed
    return computed


def variant_references(variant) -> dict[str, object]:
    """The variant's reference answers (``engine.reference_answers``), computed once per
    process for a stored variant: a page reads them for its parts, its heatmaps and its
    feedback, the submit and the grade for the checker."""
    computed = _variant_computed(variant)
    if computed.references is None:
        computed.references = engine.reference_answers(version_spec(variant.exercise_version), variant.params)
    return computed.references


def variant_part_options(variant, part_key: str) -> dict:
    """The checker's options of one part of this variant (``engine.part_options``), computed
    once per process for a stored variant. KeyError for a part the spec does not have."""
    computed = _variant_computed(variant)
    options = computed.options.get(part_key)
    if options is None:
        options = engine.part_options(version_spec(variant.exercise_version), variant.params, part_key)
        computed.options[part_key] = options
    return options


def part_label(spec: engine.ExerciseSpec, key: str) -> str:
    """A part as people name it: "(a)", "(b)", … in the exercise's order ("(?)" for a key
    the spec no longer has). Pages show this, never the part's key."""
    keys = [part.key for part in spec.parts]
    if key not in keys:
        return "(?)"
    index = keys.index(key)
    return f"({chr(ord('a') + index)})" if index < 26 else f"({index + 1})"
