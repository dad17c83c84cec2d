"""Hostile exercise sources through the authoring pages, third round: work that is small in
each result but large in total, and Markdown whose links cost the square of its length.
Each is refused on save with its line, or saved and shown quickly as text; never a hang."""

import html as html_module
import re
import time

import pytest
from django.urls import reverse

from exercises.engine.expressions import MAX_EXPRESSION_WORK
from exercises.models import Exercise

from .factories import PASSWORD

SOURCE = """\
slug: hostile-round-three
title: Hostile round three
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 9}
#PARAMETERS
prompt: |
  #PROMPT Multiply {{a}} by two.
parts:
  - key: p
    type: numeric
    answer: "a * 2"
    decimals: 0
    solution: |
      It is {{a * 2}}.
"""


def source_with(*, parameters: str = "", prompt: str = "") -> str:
    return (SOURCE.replace("#PARAMETERS\n", parameters + "\n" if parameters else "")
            .replace("#PROMPT ", prompt + " " if prompt else ""))


@pytest.fixture
def instructor(client, people):
    assert client.login(username="ines", password=PASSWORD)
    return client


def created(client, source: str):
    return client.post(reverse("authoring:new", args=["attn"]), {"source": source})


def issues(html: str) -> list[str]:
    return [html_module.unescape(re.sub(r"<[^>]+>", "", item))
            for item in re.findall(r"<li data-line[^>]*>.*?</li>", html, re.S)]


PRODUCTS = "sum((ones(316, 316)@ones(316, 316)+ones(316, 316)@ones(316, 316))+ones(316, 316)@ones(316, 316))"


def test_an_expression_of_many_products_is_refused_on_save_with_its_line(instructor):
    started = time.monotonic()
    response = created(instructor, source_with(parameters=f'  Z: {{generator: derived, expr: "{PRODUCTS}"}}'))
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "The exercise does not work: none of seeds 0–9 gives an acceptable variant in 100 draws each.",
        f"line 6: parameters.Z.expr: parameter `Z`: expression `{PRODUCTS}` failed for 1000 of 1000 draws: "
        f"the expression needs too much computation (more than {MAX_EXPRESSION_WORK:,} steps, counting every "
        "entry made and every multiply-add); use smaller matrices or fewer of them",
    ]
    assert Exercise.objects.count() == 0
    assert time.monotonic() - started < 20


def test_a_prompt_of_three_thousand_unclosed_links_is_saved_and_previewed_quickly_as_text(instructor):
    # In quotes: the reader's bracket-nesting check skips quoted text, so it reaches Markdown.
    source = SOURCE.replace("prompt: |\n  #PROMPT Multiply {{a}} by two.\n",
                            'prompt: "' + "[a " * 3_000 + 'Multiply {{a}} by two."\n')
    started = time.monotonic()
    assert created(instructor, source).status_code == 302
    response = instructor.get(reverse("authoring:preview", args=["attn", "hostile-round-three", 1]), {"seed": "3"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "[a " * 3_000 + "Multiply 6 by two." in body
    assert time.monotonic() - started < 20

