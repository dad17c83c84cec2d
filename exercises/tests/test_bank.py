"""The built-in question bank: every file loads, and the chapter's numbers come out exactly."""

from pathlib import Path

import pytest

from exercises.engine import draw_variant, load_spec, reference_answers

BANK = Path(__file__).resolve().parents[1] / "bank"
BANK_FILES = sorted(BANK.glob("*.yaml"))


def rounded(values, decimals=4):
    return [round(v, decimals) for v in values]


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: p.stem)
def test_bank_file_loads_and_slug_matches_file_name(path):
    spec = load_spec(path.read_text())
    assert spec.slug == path.stem


def test_chapter_variant_reproduces_the_worked_example():
    spec = load_spec((BANK / "attention-weights-one-query.yaml").read_text())
    draw = draw_variant(spec, 0, name="chapter")
    answers = reference_answers(spec, draw.params)
    assert draw.params["q"] == 3
    assert draw.params["Q"] == [[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]]
    assert draw.params["K"] == [[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
    assert draw.params["V"] == [[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]]
    assert draw.params["scores_q"] == [5, 3, 4, 4]
    assert rounded(answers["weights"]) == [0.3875, 0.1425, 0.2350, 0.2350]
    assert rounded(answers["output"]) == [1.6225, 0.3775, 1.8674, 1.0]
