"""A variant's reference answers and checker options are computed once per process and
never served for other numbers than the variant's own."""

import numpy as np
import pytest

from exercises import engine
from exercises.models import Variant
from exercises.specs import variant_part_options, variant_references
from grading import services


@pytest.fixture
def counted(monkeypatch):
    calls = {"references": 0, "options": 0}
    references, options = engine.reference_answers, engine.part_options

    def count_references(*args, **kwargs):
        calls["references"] += 1
        return references(*args, **kwargs)

    def count_options(*args, **kwargs):
        calls["options"] += 1
        return options(*args, **kwargs)

    monkeypatch.setattr(engine, "reference_answers", count_references)
    monkeypatch.setattr(engine, "part_options", count_options)
    return calls


def fresh(variant) -> Variant:
    """The variant as a new request reads it: a new object from the database."""
    return Variant.objects.select_related("exercise_version", "assignment_item__assignment").get(pk=variant.pk)


def test_each_request_reuses_what_the_first_computed(variant, counted):
    first = services.part_context(variant=fresh(variant), part="weights")
    again = services.part_context(variant=fresh(variant), part="weights")
    assert counted == {"references": 1, "options": 1}
    assert again.expected is first.expected and again.options is first.options
    spec = engine.spec_from_json(variant.exercise_version.spec)
    assert np.allclose(first.expected, engine.reference_answers(spec, variant.params)["weights"])
    assert first.options == engine.part_options(spec, variant.params, "weights")


def test_other_numbers_under_the_same_id_are_computed_again(variant, counted):
    before = variant_references(fresh(variant))["weights"]
    changed = fresh(variant)
    changed.params = {**changed.params, "Q": (np.asarray(changed.params["Q"], dtype=float) * 2).tolist()}
    after = variant_references(changed)["weights"]
    assert counted["references"] == 2
    spec = engine.spec_from_json(variant.exercise_version.spec)
    assert np.allclose(after, engine.reference_answers(spec, changed.params)["weights"])
    assert not np.allclose(after, before)


def test_a_new_content_of_the_version_is_computed_again(variant, counted):
    variant_part_options(fresh(variant), "weights")
    changed = fresh(variant)
    changed.exercise_version.content_hash = "another-content"
    variant_part_options(changed, "weights")
    assert counted["options"] == 2


def test_a_variant_not_stored_is_never_kept(variant, counted):
    unsaved = fresh(variant)
    unsaved.pk = None
    variant_references(unsaved)
    variant_references(unsaved)
    assert counted["references"] == 2


def test_a_part_the_spec_lacks_is_refused(variant):
    with pytest.raises(services.SubmissionRefused) as refused:
        services.part_context(variant=fresh(variant), part="no-such-part")
    assert refused.value.code == "unknown_part"
    with pytest.raises(KeyError):
        variant_part_options(fresh(variant), "no-such-part")


def test_the_kept_copies_stay_within_their_bound(variant, monkeypatch):
    from exercises import specs

    monkeypatch.setattr(specs, "MAX_CACHED_VARIANTS", 2)
    monkeypatch.setattr(specs, "_variants", {})
    for offset in range(5):
        other = fresh(variant)
        other.pk = variant.pk + 1_000_000 + offset  # stands for another stored variant
        variant_references(other)
        assert 1 <= len(specs._variants) <= 2


def test_a_graded_result_shows_each_attempt_with_the_options_its_grade_used(variant, counted):
    from grading.answer_input import answer_shown

    services.part_context(variant=fresh(variant), part="weights")  # the submit computed them
    shown = [answer_shown(variant=fresh(variant), part_key="weights", raw_answer="[0.25, 0.25, 0.25, 0.25]")
             for _ in range(3)]  # the history of three attempts
    assert counted == {"references": 1, "options": 1}
    assert shown == [{
        "text": "[0.25, 0.25, 0.25, 0.25]",
        "latex": [r"\begin{bmatrix} 0.25 & 0.25 & 0.25 & 0.25 \end{bmatrix}"],
    }] * 3
