""""Check and preview" and saving try the exercise as students get it, under time limits."""

import time

import pytest
from django.urls import reverse

from authoring import selectors
from exercises.models import Exercise

from .factories import PASSWORD, product_yaml

EVERY_SEED_FAILS = """\
slug: causal-weights
title: Causal weights
version: 1
parameters:
  Q: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}
  K: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}
  V: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}
  W: {generator: derived, expr: "attention(Q, K, V, causal=1)"}
prompt: Compute the causal attention weights.
parts:
  - key: weights
    type: matrix
    answer: "attention(Q, K, V, causal=True).weights"
    solution: Mask, then softmax.
"""

# Every draw is rejected by the gate, and each draw multiplies 316 x 316 matrices.
SPINNING_GATES = """\
slug: spinning
title: Spinning
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
  M: {generator: derived, expr: "sum(eye(316) @ eye(316) @ eye(316) @ eye(316) @ eye(316))"}
prompt: Compute {{a}}.
parts:
  - key: value
    type: numeric
    answer: "a"
    decimals: 0
    solution: It is {{a}}.
gates:
  max_attempts: 1000
  checks:
    - {kind: require, expr: "a > 100", reason: never}
"""


@pytest.fixture
def instructor(client, people):
    assert client.login(username="ines", password=PASSWORD)
    return client


def test_a_source_whose_every_seed_fails_is_reported_with_the_parameter_and_its_line(instructor):
    response = instructor.post(
        reverse("authoring:check", args=["attn"]), {"source": EVERY_SEED_FAILS, "seed": "0"}
    )
    html = response.content.decode()
    assert "The file is valid" not in html
    assert "Not valid yet. The exercise does not work: none of seeds 0–9 gives an acceptable variant in 100 draws each." in html
    assert (
        '<li data-line="8" data-field="parameters.W.expr">line 8: parameters.W.expr: parameter `W`: '
        "expression `attention(Q, K, V, causal=1)` failed for 1000 of 1000 draws: "
        "an attention result must be narrowed, e.g. with .weights[q]</li>"
    ) in html
    assert html.count("an attention result must be narrowed") == 1


def test_create_draft_refuses_a_source_that_cannot_produce_a_variant(instructor):
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": EVERY_SEED_FAILS})
    assert response.status_code == 422
    html = response.content.decode()
    assert "none of seeds 0–9 gives an acceptable variant in 100 draws each." in html
    assert "line 8: parameters.W.expr: parameter `W`: expression `attention(Q, K, V, causal=1)` failed for 1000 of 1000 draws" in html
    assert Exercise.objects.count() == 0


def test_causal_false_as_documented_is_valid(instructor):
    source = EVERY_SEED_FAILS.replace(
        '  W: {generator: derived, expr: "attention(Q, K, V, causal=1)"}\n', ""
    ).replace("causal=True", "causal=False")
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source, "seed": "4"})
    assert "The file is valid: seeds 0–9 and every named variant" in response.content.decode()
    assert instructor.post(reverse("authoring:new", args=["attn"]), {"source": source}).status_code == 302
    assert Exercise.objects.get().slug == "causal-weights"


def test_a_gate_loop_that_would_spin_is_stopped_within_the_budget(instructor, monkeypatch):
    monkeypatch.setitem(selectors.CHECK_LIMITS, "cpu_seconds", 1.5)
    monkeypatch.setitem(selectors.CHECK_LIMITS, "wall_seconds", 2.0)
    started = time.monotonic()
    response = instructor.post(
        reverse("authoring:check", args=["attn"]), {"source": SPINNING_GATES, "seed": "0"}
    )
    assert time.monotonic() - started < 6
    html = response.content.decode()
    assert response.status_code == 200
    assert "Not valid yet. Stopped: this exercise needed more than the 2 s (or 512 MB) allowed" in html
    created = instructor.post(reverse("authoring:new", args=["attn"]), {"source": SPINNING_GATES})
    assert created.status_code == 422
    assert "Stopped: this exercise needed more than the 2 s" in created.content.decode()
    assert Exercise.objects.count() == 0


def test_the_editor_checks_again_as_the_author_types(instructor):
    html = instructor.get(reverse("authoring:new", args=["attn"])).content.decode()
    assert 'hx-trigger="click, input changed delay:600ms from:#id_source, ' in html
    assert "<script" not in html.split("<main", 1)[1]  # no inline script: the CSP forbids it


def test_a_valid_source_still_checks_clean(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": product_yaml(), "seed": "2"})
    assert 'id="check-ok"' in response.content.decode()
