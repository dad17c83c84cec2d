"""What a screen reader calls each answer control of the exercise page: every name says
which part the control belongs to, so three parts never read "Your answer" three times."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from courses.models import AssignmentItem


class AnswerControls(HTMLParser):
    """The controls of the page's answer forms with their accessible names, computed as a
    browser does for this markup: ``aria-label``, else the ``<label for>`` of the control's
    id, else the ``<label>`` around it. A fieldset's and a role="group"'s name come from its
    legend or ``aria-label``. Hidden inputs (the CSRF token) are no controls."""

    def __init__(self):
        super().__init__()
        self.controls: list[dict] = []
        self.label_text_by_for: dict[str, str] = {}
        self.open_labels: list[dict] = []
        self.legend: dict | None = None
        self.button: dict | None = None
        self.part: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and "answer-form" in (attrs.get("class") or ""):
            self.part = attrs["data-part"]
        if self.part is None:
            return
        if tag == "label":
            self.open_labels.append({"for": attrs.get("for"), "text": [], "controls": []})
        elif tag == "legend":
            self.legend = {"role": "group", "aria_label": None, "text": []}
            self.controls.append(self.legend)
        elif attrs.get("role") == "group":
            self.controls.append({"role": "group", "aria_label": attrs.get("aria-label")})
        elif tag in ("input", "textarea", "button") and attrs.get("type") != "hidden":
            role = {"radio": "radio", "checkbox": "checkbox"}.get(attrs.get("type"), "textbox")
            control = {
                "role": "button" if tag == "button" else role, "id": attrs.get("id"),
                "aria_label": attrs.get("aria-label"), "text": [],
            }
            self.controls.append(control)
            if self.open_labels:
                self.open_labels[-1]["controls"].append(control)
            if tag == "button":
                self.button = control

    def handle_endtag(self, tag):
        if tag == "form":
            self.part = None
        elif tag == "label" and self.open_labels:
            label = self.open_labels.pop()
            text = " ".join("".join(label["text"]).split())
            if label["for"]:
                self.label_text_by_for[label["for"]] = text
            for control in label["controls"]:
                control.setdefault("wrapping_label", text)
        elif tag == "legend":
            self.legend = None
        elif tag == "button":
            self.button = None

    def handle_data(self, data):
        for label in self.open_labels:
            label["text"].append(data)
        if self.legend is not None:
            self.legend["text"].append(data)
        if self.button is not None:
            self.button["text"].append(data)

    def names(self) -> list[tuple[str, str]]:
        named = []
        for control in self.controls:
            name = (
                control.get("aria_label")
                or self.label_text_by_for.get(control.get("id") or "")
                or control.get("wrapping_label")
                or " ".join("".join(control.get("text", [])).split())
            )
            named.append((control["role"], name))
        return named


def answer_control_names(html: str) -> list[tuple[str, str]]:
    """(role, accessible name) of every control of the page's answer forms, in page order."""
    reader = AnswerControls()
    reader.feed(html)
    return reader.names()


@pytest.fixture
def student_client(client, demo, django_user_model):
    client.force_login(django_user_model.objects.get(username="student1"))
    return client


def page_of(client, demo, slug: str) -> str:
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)
    response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_text_numeric_and_derivation_boxes_each_name_their_part(student_client, demo):
    # score-variance: (a) derivation, (b) symbolic, (c) derivation, (d) symbolic, (e) numeric
    assert answer_control_names(page_of(student_client, demo, "score-variance")) == [
        ("textbox", "Your derivation for part (a), one step per line"), ("button", "Submit part (a)"),
        ("textbox", "Your answer to part (b)"), ("button", "Submit part (b)"),
        ("textbox", "Your derivation for part (c), one step per line"), ("button", "Submit part (c)"),
        ("textbox", "Your answer to part (d)"), ("button", "Submit part (d)"),
        ("textbox", "Your answer to part (e)"), ("button", "Submit part (e)"),
    ]


def test_choices_one_row_grids_and_the_explanation_name_their_part(student_client, demo):
    # equal-keys: (a) one choice of six, (b) and (c) 1 × 4 grids, (d) free text. A radio
    # button is named by its choice; its group, which a screen reader says on entering,
    # names the part.
    entries = ("first", "second", "third", "fourth")
    assert answer_control_names(page_of(student_client, demo, "equal-keys")) == [
        ("group", "Choose one answer to part (a)"),
        ("radio", "tokens 0 and 1"), ("radio", "tokens 0 and 2"), ("radio", "tokens 0 and 3"),
        ("radio", "tokens 1 and 2"), ("radio", "tokens 1 and 3"), ("radio", "tokens 2 and 3"),
        ("button", "Submit part (a)"),
        ("group", "Answer grid of part (b), 1 by 4"),
        *[("textbox", f"{word} entry of part (b)") for word in entries],
        ("button", "Submit part (b)"),
        ("group", "Answer grid of part (c), 1 by 4"),
        *[("textbox", f"{word} entry of part (c)") for word in entries],
        ("button", "Submit part (c)"),
        ("textbox", "Your explanation for part (d)"), ("button", "Submit part (d)"),
    ]


def test_a_square_grids_cells_name_row_column_and_part(student_client, demo):
    # score-matrix-entries: (a) numeric, (b) a 1 × 3 grid, (c) a 3 × 3 grid
    names = answer_control_names(page_of(student_client, demo, "score-matrix-entries"))
    ordinals = ("first", "second", "third")
    assert names == [
        ("textbox", "Your answer to part (a)"), ("button", "Submit part (a)"),
        ("group", "Answer grid of part (b), 1 by 3"),
        *[("textbox", f"{word} entry of part (b)") for word in ordinals],
        ("button", "Submit part (b)"),
        ("group", "Answer grid of part (c), 3 by 3"),
        *[("textbox", f"{row} row, {column} column of part (c)") for row in ordinals for column in ordinals],
        ("button", "Submit part (c)"),
    ]


def test_a_one_row_grid_and_a_matrix_expression_name_their_part(student_client, demo):
    html = page_of(student_client, demo, "attention-weights-one-query")
    assert answer_control_names(html) == [
        ("group", "Answer grid of part (a), 1 by 4"),
        *[("textbox", f"{word} entry of part (a)") for word in ("first", "second", "third", "fourth")],
        ("button", "Submit part (a)"),
        ("group", "Answer grid of part (b), 1 by 4"),
        *[("textbox", f"{word} entry of part (b)") for word in ("first", "second", "third", "fourth")],
        ("button", "Submit part (b)"),
    ]
    names = answer_control_names(page_of(student_client, demo, "attention-as-matrix-expression"))
    assert names[:2] == [("textbox", "Your answer to part (a)"), ("button", "Submit part (a)")]


def test_the_forms_carry_the_part_label_the_scripts_name_their_own_controls_after(student_client, demo):
    html = page_of(student_client, demo, "score-variance")
    assert re.findall(r'data-part="[^"]*" data-part-label="([^"]*)"', html) == [
        "(a)", "(b)", "(c)", "(d)", "(e)",
    ]
