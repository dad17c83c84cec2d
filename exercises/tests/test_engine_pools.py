"""Pool skill and size of an exercise; the built-in bank has a pool's worth per skill."""

from pathlib import Path

from exercises.engine import load_spec
from exercises.engine.pools import (
    PoolProfile,
    interchangeable_groups,
    pool_profile,
    pool_skill,
    pool_suggestion,
)
from exercises.engine.skills import SKILL_SLUGS

BANK_FILES = sorted((Path(__file__).resolve().parents[1] / "bank").glob("*.yaml"))

SPEC = """\
slug: tiny
title: Tiny
version: 1
{default}parameters:
  a: {{generator: int_range, min: 1, max: 3}}
prompt: "Give {{{{a}}}}."
parts:
  - key: first
    type: numeric
    answer: a
    points: 1
    skills: [softmax]
    solution: done
  - key: second
    type: numeric
    answer: a
    points: 2
    skills: [scaling, softmax]
    solution: done
"""


def profile(slug, skill="softmax", points=3.0, parts=3):
    return PoolProfile(slug=slug, title=slug.title(), skill=skill, points=points, parts=parts, difficulty="easy")


def test_the_declared_default_skill_comes_first():
    spec = load_spec(SPEC.format(default="skills: [projections, softmax]\n"))
    assert pool_skill(spec) == "projections"


def test_without_a_default_the_skill_with_the_most_part_weight_wins():
    spec = load_spec(SPEC.format(default=""))
    # softmax carries 1 + 2, scaling 2
    assert pool_skill(spec) == "softmax"
    assert pool_profile(spec) == PoolProfile("tiny", "Tiny", "softmax", 3.0, 2, "medium")


def test_exercises_fit_on_same_skill_same_weight_and_nearly_same_length():
    assert profile("a").fits(profile("b", parts=4))
    assert not profile("a").fits(profile("b", parts=5))
    assert not profile("a").fits(profile("b", points=4.0))
    assert not profile("a").fits(profile("b", skill="scaling"))
    assert not profile("a", skill=None).fits(profile("b", skill=None))


def test_groups_put_the_largest_interchangeable_set_first():
    profiles = [profile("big", points=5, parts=5), profile("c"), profile("a"), profile("b", parts=2),
                profile("other", skill="scaling")]
    groups = interchangeable_groups(profiles, "softmax")
    assert [[p.slug for p in group] for group in groups] == [["b", "a", "c"], ["big"]]
    assert [p.slug for p in pool_suggestion(profiles, "softmax", 2)] == ["a", "b"]
    assert pool_suggestion(profiles, "softmax", 0) == []
    assert pool_suggestion(profiles, "weighted-values", 3) == []


def test_the_bank_has_forty_exercises_and_three_interchangeable_ones_per_skill():
    profiles = [pool_profile(load_spec(path.read_text())) for path in BANK_FILES]
    assert len(profiles) >= 40
    largest = {skill: len(interchangeable_groups(profiles, skill)[0]) for skill in SKILL_SLUGS}
    assert {skill: count for skill, count in largest.items() if count < 3} == {}
