"""Skills in the exercise format: one vocabulary, part or exercise default, clear errors;
every misconception maps to a known skill; every part of the built-in bank is tagged."""

from pathlib import Path

import pytest

from exercises.engine import SpecError, load_spec, spec_from_json, spec_to_json
from exercises.engine import skills as skill_vocabulary
from grading.core.misconceptions import MISCONCEPTION_LABELS, MISCONCEPTIONS

BANK_FILES = sorted((Path(__file__).resolve().parents[1] / "bank").glob("*.yaml"))

TWO_PARTS = """\
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
{first}    solution: done
  - key: second
    type: numeric
    answer: a
    solution: done
"""


def spec_with(default="", first=""):
    return TWO_PARTS.format(default=default, first=first)


def errors_of(text):
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    return [str(issue) for issue in caught.value.errors]


@pytest.mark.parametrize(
    ("default", "first", "expected"),
    [
        ("", "", ((), ())),
        ("skills: [scaling]\n", "", (("scaling",), ("scaling",))),
        ("", "    skills: [softmax, scaling]\n", (("softmax", "scaling"), ())),
        ("skills: [scaling]\n", "    skills: [softmax]\n", (("softmax",), ("scaling",))),
        # An explicit empty list on a part opts out of the exercise's default.
        ("skills: [scaling]\n", "    skills: []\n", ((), ("scaling",))),
    ],
)
def test_parts_take_their_own_skills_or_the_exercise_default(default, first, expected):
    spec = load_spec(spec_with(default, first))
    assert (spec.part("first").skills, spec.part("second").skills) == expected


@pytest.mark.parametrize(
    ("default", "first", "message"),
    [
        ("", "    skills: [scalling]\n",
         f"line 11: parts[0].skills: unknown skill 'scalling'; known: {', '.join(skill_vocabulary.SKILL_SLUGS)}"),
        ("skills: [Softmax]\n", "",
         f"line 4: skills: unknown skill 'Softmax'; known: {', '.join(skill_vocabulary.SKILL_SLUGS)}"),
        ("skills: scaling\n", "", "line 4: skills: must be a list of skill names, e.g. [scaling, softmax]"),
        ("", "    skills: [3]\n", "line 11: parts[0].skills: must be a list of skill names, e.g. [scaling, softmax]"),
        ("", "    skills: [scaling, scaling]\n", "line 11: parts[0].skills: lists a skill twice"),
    ],
)
def test_bad_skills_are_refused_with_line_path_and_the_known_vocabulary(default, first, message):
    assert errors_of(spec_with(default, first)) == [message]


def test_skills_survive_the_stored_json_round_trip():
    spec = load_spec(spec_with("skills: [scaling]\n", "    skills: [softmax]\n"))
    stored = spec_from_json(spec_to_json(spec))
    assert (stored.skills, stored.part("first").skills, stored.part("second").skills) == (
        ("scaling",), ("softmax",), ("scaling",)
    )


@pytest.mark.parametrize(
    ("part_key", "expected"),
    [("first", ("softmax",)), ("second", ("scaling",)), ("missing", ())],
)
def test_part_skills_reads_stored_json_without_revalidating(part_key, expected):
    data = spec_to_json(load_spec(spec_with("skills: [scaling]\n", "    skills: [softmax]\n")))
    assert skill_vocabulary.part_skills(data, part_key) == expected


def test_part_skills_of_hostile_stored_data_is_empty_or_known_only():
    assert skill_vocabulary.part_skills("not a dict", "a") == ()
    assert skill_vocabulary.part_skills({"parts": [{"key": "a", "skills": ["scaling", "rm -rf"]}]}, "a") == ("scaling",)
    assert skill_vocabulary.part_skills({"parts": None}, "a") == ()


def test_every_misconception_maps_to_a_known_skill_and_has_a_label():
    assert skill_vocabulary.misconceptions_without_skill() == []
    assert set(skill_vocabulary.MISCONCEPTION_SKILLS) == set(MISCONCEPTIONS)
    assert skill_vocabulary.unknown_skills(skill_vocabulary.MISCONCEPTION_SKILLS.values()) == []
    assert set(MISCONCEPTION_LABELS) == set(MISCONCEPTIONS)
    assert all(label and len(label) <= 40 for label in MISCONCEPTION_LABELS.values())


@pytest.mark.parametrize(
    ("code", "skill"),
    [("no_scaling", "scaling"), ("forgot_sigma", "variance-derivation"), ("sigmas_added", "variance-derivation"),
     ("d_model_scale", "multi-head-shapes"),
     ("softmax_wrong_axis", "softmax"), ("", None), (None, None), ("made_up", None)],
)
def test_skill_for_misconception(code, skill):
    assert skill_vocabulary.skill_for_misconception(code) == skill


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: p.stem)
def test_every_part_of_the_bank_declares_skills(path):
    spec = load_spec(path.read_text())
    assert [part.key for part in spec.parts if not part.skills] == []


def test_every_skill_is_exercised_somewhere_in_the_bank():
    used = {skill for path in BANK_FILES for part in load_spec(path.read_text()).parts for skill in part.skills}
    assert sorted(set(skill_vocabulary.SKILL_SLUGS) - used) == []


def test_a_diagnosed_part_exercises_the_skill_its_no_scaling_slip_reveals():
    # the scaling misconceptions are what the diagnosed numeric parts catch most
    for path in BANK_FILES:
        for part in load_spec(path.read_text()).parts:
            if part.diagnose and part.diagnose["quantity"] in ("weights", "scaled_scores"):
                assert "scaling" in part.skills, f"{path.stem}.{part.key}"
