"""Answer boxes ask phones for a keyboard that can type every accepted answer: a decimal
keypad (inputmode="decimal") has no minus, no e and no / on iOS and types "," in
comma-decimal locales, so numbers, grid cells and expressions all get the text keyboard,
without capitals, corrections, suggestions or spell-checking."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from courses.models import AssignmentItem

SCORE_VARIANCE = "score-variance"  # (a) derivation, (b) symbolic, (c) derivation, (d) symbolic, (e) numeric
WORKED_EXAMPLE = "attention-weights-one-query"  # (a) and (b): 1 × 4 grids


class AnswerControls(HTMLParser):
    def __init__(self):
        super().__init__()
        self.controls: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name") or ""
        if tag in ("input", "textarea") and (name == "answer" or name.startswith("cell-")):
            if attrs.get("type") not in ("radio", "checkbox", "hidden"):
                self.controls.append({"tag": tag, **attrs})


def answer_controls(client, demo, slug: str) -> tuple[list[dict], str]:
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)
    assert client.login(username="student1", password="attention-demo")
    html = client.get(reverse("exercise", args=[item.pk])).content.decode()
    parser = AnswerControls()
    parser.feed(html)
    return parser.controls, html


TYPED = {"autocomplete": "off", "autocapitalize": "off", "autocorrect": "off", "spellcheck": "false"}


@pytest.mark.parametrize("slug", [SCORE_VARIANCE, WORKED_EXAMPLE])
def test_every_answer_box_gets_a_text_keyboard_without_corrections(client, demo, slug):
    controls, html = answer_controls(client, demo, slug)
    assert controls
    assert 'inputmode="decimal"' not in html and 'inputmode="numeric"' not in html
    for control in controls:
        assert {key: control.get(key) for key in TYPED} == TYPED, control
        if control["tag"] == "input":
            assert control["inputmode"] == "text", control


def test_the_numeric_part_and_grid_cells_take_text(client, demo):
    controls, _ = answer_controls(client, demo, SCORE_VARIANCE)
    numeric = next(c for c in controls if c.get("data-preview") == "numeric")
    assert (numeric["id"], numeric["inputmode"], numeric["autocapitalize"]) == ("answer-textbook_std", "text", "off")
    cells, _ = answer_controls(client, demo, WORKED_EXAMPLE)
    assert [c["name"] for c in cells] == [f"cell-0-{n}" for n in range(4)] * 2
    assert {c["inputmode"] for c in cells} == {"text"}
