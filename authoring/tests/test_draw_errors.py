"""On the authoring pages a draw that fails names the parameter, part or gate with its
line and field, each cause once with how many draws it refused; the preview shows a
choice part's choices."""

from html import escape
from pathlib import Path

import pytest
from django.urls import reverse

import exercises
from exercises.models import Exercise
from exercises.tests.test_engine_draw_problems import BASE, WORKING, broken

from .factories import PASSWORD, published_version

ALL_FAIL = "The exercise does not work: none of seeds 0–9 gives an acceptable variant in 1 draw each."

# source, the headline, then each problem as listed: (line, field, message)
PAGES = [
    pytest.param(
        BASE,
        "The exercise does not work for seeds 0, 1, 2, 7, 8, 9 (of 0–9): no acceptable variant in 1 draw each.",
        [(11, "parameters.K.expr",
          "parameter `K`: expression `X @ W_K` failed for 6 of 10 draws: shapes (4,4) and (3,4) do not align")],
        id="derived-expression",
    ),
    pytest.param(
        # (written as numbers, such bounds are refused when the file is read)
        broken("n: {generator: int_range, min: 3, max: 4}", 'n: {generator: int_range, min: "2 + 3", max: 2}'),
        ALL_FAIL,
        [(6, "parameters.n.min",
          "parameter `n`: the bounds leave nothing to draw for 10 of 10 draws: min 5 is above max 2")],
        id="impossible-bounds",
    ),
    pytest.param(
        broken("gates:\n  max_attempts: 1\n",
               "gates:\n  max_attempts: 1\n  checks:\n    - {kind: require, expr: \"a > 100\", reason: a is at most 9}\n"),
        ALL_FAIL,
        [(22, "gates.checks[0]", "gate `require: a > 100`: rejected the draw for 10 of 10 draws: a is at most 9")],
        id="gate-always-rejects",
    ),
    pytest.param(
        broken('answer: "K"', 'answer: "X @ K"'),
        ALL_FAIL,
        [(16, "parts[0].answer",
          "part `keys`: expression `X @ K` failed for 10 of 10 draws: shapes (4,3) and (4,4) do not align")],
        id="shape-mismatch",
    ),
]


@pytest.fixture
def instructor(client, people):
    assert client.login(username="ines", password=PASSWORD)
    return client


def listed(line, field, message) -> str:
    return f'<li data-line="{line}" data-field="{field}">line {line}: {field}: {escape(message)}</li>'


@pytest.mark.parametrize(("source", "headline", "problems"), PAGES)
def test_check_and_preview_lists_each_cause_once_with_line_and_field(instructor, source, headline, problems):
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source, "seed": "0"}).content.decode()
    assert f'<p class="bad">Not valid yet. {headline}</p>' in html
    for line, field, message in problems:
        assert listed(line, field, message) in html
        assert html.count(message.split(": ", 2)[-1]) == 1  # the detail, once


@pytest.mark.parametrize(("source", "headline", "problems"), PAGES)
def test_saving_a_draft_refuses_it_with_the_same_list(instructor, source, headline, problems):
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": source})
    assert response.status_code == 422
    html = response.content.decode()
    assert f"<li data-line=\"\">{headline}</li>" in html
    for line, field, message in problems:
        assert f'<li data-line="{line}">line {line}: {field}: {escape(message)}</li>' in html
    assert f"{len(problems) + 1} problems in the exercise file" in html
    assert Exercise.objects.count() == 0


def test_an_unknown_name_is_refused_when_read_with_its_line(instructor):
    source = broken('expr: "X @ W_K"', 'expr: "X @ W_Q"')
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source}).content.decode()
    assert '<li data-line="11">' + escape("line 11: parameters.K.expr: unknown name 'W_Q' in 'X @ W_Q'") + "</li>" in html


def test_the_preview_of_a_stored_version_counts_its_redraws_with_lines(instructor):
    source = broken("gates:\n  max_attempts: 1\n",
                    "gates:\n  max_attempts: 20\n  checks:\n    - {kind: require, expr: \"a > 4\", reason: a must exceed 4}\n",
                    base=BASE)
    version = published_version(source=source)
    html = instructor.get(
        reverse("authoring:preview", args=["attn", version.exercise.slug, 1]), {"seed": 0}, HTTP_HX_REQUEST="true"
    ).content.decode()
    # Seed 0 draws (a, n) = (4, 4): K fails; (1, 3): the gate; (7, 4): K; (6, 3) passes.
    assert "Drawn in 4 attempts; redrawn past:" in html
    assert listed(11, "parameters.K.expr",
                  "parameter `K`: expression `X @ W_K` failed for 2 of 4 draws: shapes (4,4) and (3,4) do not align") in html
    assert listed(22, "gates.checks[0]", "gate `require: a > 4`: rejected the draw for 1 of 4 draws: a must exceed 4") in html


def test_the_variant_test_explains_its_redraws_once_each(instructor):
    version = published_version(source=BASE.replace("max_attempts: 1", "max_attempts: 30"))
    html = instructor.post(reverse("authoring:test", args=["attn", version.exercise.slug, 1]), {"first_seed": 0}).content.decode()
    assert "Why candidates were redrawn" in html
    assert html.count("shapes (4,4) and (3,4) do not align") == 1
    assert 'data-field="parameters.K.expr">line 11: parameters.K.expr: parameter `K`: expression `X @ W_K` failed for ' in html


# A gate whose expression fails two ways (a row index past the matrix; a division by zero
# when a is 5) and that also refuses ties: each reason with its own count.
GATE_FAILS_TWO_WAYS = """\
slug: gate-fails-two-ways
title: A gate that fails two ways
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
  S: {generator: int_matrix, shape: [3, 3], min: 0, max: 3}
prompt: Compute {{a}}.
parts:
  - key: x
    type: numeric
    answer: "a"
    decimals: 0
    solution: It is {{a}}.
gates:
  max_attempts: 10
  checks:
    - {kind: unique_max, expr: "row(S, 4 // (a - 5))"}
"""


def test_the_variant_test_counts_each_refusal_reason_apart(instructor):
    version = published_version(source=GATE_FAILS_TWO_WAYS)
    html = instructor.post(reverse("authoring:test", args=["attn", version.exercise.slug, 1]), {"first_seed": 0}).content.decode()
    # 224 draws for 100 seeds: 99 accepted, seed 69 found none in its 10, so 125 refused.
    assert "99 of 100 variants passed" in html and "124 redraws" in html
    assert '<tr class="bad"><td class="num">69</td><td class="num">10</td>' in html
    assert listed(17, "gates.checks[0]",
                  "gate `unique_max: row(S, 4 // (a - 5))`: rejected the draw for 62 of 224 draws: "
                  "no unique maximum in row(S, 4 // (a - 5))") in html
    assert listed(17, "gates.checks[0].expr",
                  "gate `unique_max: row(S, 4 // (a - 5))`: expression `row(S, 4 // (a - 5))` failed for 43 of 224 "
                  "draws: e.g. index -4 is out of bounds for axis 0 with size 3 (and 1 more like it); "
                  "for 20 more: integer division or modulo by zero") in html
    assert 62 + 43 + 20 == 224 - 99


def test_the_editor_preview_shows_a_choice_parts_choices(instructor):
    source = (Path(exercises.__file__).parent / "bank" / "qkv-misconception.yaml").read_text()
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source, "seed": "0"}).content.decode()
    assert 'id="check-ok"' in html
    assert '<div class="preview-choices" data-part="correct_statement">' in html
    assert "Q, K and V are three learned linear maps applied to the same embeddings X.</span> — right" in html
    assert "Q, K and V are fixed by hand and not learned.</span></li>" in html


def test_a_working_source_still_checks_clean(instructor):
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": WORKING, "seed": "0"}).content.decode()
    assert 'id="check-ok"' in html and "draw-problems" not in html


def test_text_that_does_not_render_is_listed_with_the_placeholders_line(instructor):
    from exercises.tests.test_engine_draw_problems import UNRENDERABLE

    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": UNRENDERABLE}).content.decode()
    assert "Not valid yet. The exercise draws, but its text does not render for any of seeds 0–9." in html
    assert listed(14, "prompt", "the prompt: placeholder `{{X @ X}}` failed for 10 of 10 draws: "
                                "shapes (4,3) and (4,3) do not align") in html
    assert listed(20, "parts[0].solution", "part `keys`: placeholder `{{K[9]}}` failed for 10 of 10 draws: "
                                           "index 9 is out of bounds for axis 0 with size 4") in html
