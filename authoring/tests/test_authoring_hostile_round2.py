"""Hostile exercise sources through the authoring pages, second round: each is refused on
save with a message naming its line, or stored and shown inert; never a 500, never a hang."""

import html as html_module
import re
import time

import pytest
from django.urls import reverse

from exercises.models import Exercise

from .factories import PASSWORD, product_yaml

SOURCE = """\
slug: hostile-round-two
title: Hostile round two
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
      #SOLUTION It is {{a * 2}}.
"""


def source_with(*, parameters: str = "", prompt: str = "", solution: str = "", answer: str = '"a * 2"') -> str:
    return (
        SOURCE.replace("#PARAMETERS\n", parameters + "\n" if parameters else "")
        .replace("#PROMPT ", prompt + " " if prompt else "")
        .replace("#SOLUTION ", solution + " " if solution else "")
        .replace('answer: "a * 2"', f"answer: {answer}")
    )


@pytest.fixture
def instructor(client, people):
    assert client.login(username="ines", password=PASSWORD)
    return client


def created(client, source: str):
    return client.post(reverse("authoring:new", args=["attn"]), {"source": source})


def issues(html: str) -> list[str]:
    return [html_module.unescape(re.sub(r"<[^>]+>", "", item))
            for item in re.findall(r"<li data-line[^>]*>.*?</li>", html, re.S)]


def test_a_derived_parameter_too_large_to_allocate_is_refused_on_save_with_its_line(instructor):
    response = created(instructor, source_with(
        parameters='  Z: {generator: derived, expr: "outer(ones(100000), ones(100000))"}'))
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "The exercise does not work: none of seeds 0–9 gives an acceptable variant in 100 draws each.",
        "line 6: parameters.Z.expr: parameter `Z`: expression `outer(ones(100000), ones(100000))` failed for "
        "1000 of 1000 draws: outer(...) would make an array of 10000000000 entries (at most 100000)",
    ]
    assert Exercise.objects.count() == 0


def test_a_numeric_answer_of_true_or_false_is_refused_on_save_with_its_line(instructor):
    response = created(instructor, source_with(answer='"a > 1"'))
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "The exercise does not work: none of seeds 0–9 gives an acceptable variant in 100 draws each.",
        "line 11: parts[0].answer: part `p`: expression `a > 1` failed for 1000 of 1000 draws: "
        "a numeric answer must be made of numbers, not true/false (a comparison)",
    ]
    assert Exercise.objects.count() == 0


def test_a_placeholder_printing_too_many_numbers_is_refused_on_save_with_its_line(instructor):
    response = created(instructor, source_with(parameters='  Z: {generator: derived, expr: "ones(2000)"}',
                                               prompt="{{Z}}"))
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "The exercise draws, but its text does not render for any of seeds 0–9.",
        "line 8: prompt: the prompt: placeholder `{{Z}}` failed for 10 of 10 draws: "
        "a value shown in text has at most 1000 numbers; this one has 2000",
    ]


def test_a_text_that_would_grow_without_bound_is_refused_quickly_naming_its_field(instructor):
    started = time.monotonic()
    response = created(instructor, source_with(parameters='  Z: {generator: derived, expr: "ones(30, 30)"}',
                                               prompt="{{Z}}" * 100))
    assert time.monotonic() - started < 10
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "The exercise draws, but its text does not render for any of seeds 0–9.",
        "line 7: prompt: the prompt: the text could not be filled in for 10 of 10 draws: "
        "the text would be longer than 100000 characters once filled in",
    ]


STRUCTURE_BOMBS = [
    ("a: &a [1, 2]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
     "line 1: b[0]: YAML anchors and aliases (&name, *name) are not supported; write the value out"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", "line 1: brackets nested more than 20 levels deep"),
    ("".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n",
     "line 22: k0.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12.k13.k14.k15.k16.k17.k18.k19.k20: "
     "nested more than 20 levels deep"),
]


@pytest.mark.parametrize(("source", "message"), STRUCTURE_BOMBS)
def test_yaml_bombs_and_deep_nesting_are_refused_with_their_line(instructor, source, message):
    response = created(instructor, source)
    assert response.status_code == 422
    assert issues(response.content.decode()) == [message]


def test_a_source_over_the_size_limit_is_a_form_error_not_a_500(instructor):
    response = created(instructor, "# " + "x" * 300_000 + "\n" + product_yaml())
    assert response.status_code == 200
    assert "Ensure this value has at most 200000 characters (it has 300452)." in response.content.decode()
    assert Exercise.objects.count() == 0


def test_a_five_megabyte_post_is_refused_as_too_large(instructor):
    response = created(instructor, "x" * 5_000_000)
    assert response.status_code == 413
    assert Exercise.objects.count() == 0


MARKUP = (
    "<script>alert(1)</script> <svg onload=alert(1)> <img src=x onerror=alert(1)> "
    "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(2)) ![z](javascript:alert(3)) "
    '<p style="color:red">s</p>'
)


def test_markup_in_the_prompt_and_solution_is_shown_as_text_in_the_preview(instructor, people):
    source = source_with(prompt=MARKUP, solution=MARKUP)
    assert created(instructor, source).status_code == 302
    response = instructor.get(reverse("authoring:preview", args=["attn", "hostile-round-two", 1]), {"seed": "3"})
    assert response.status_code == 200
    body = response.content.decode().split("<main", 1)[1]
    shown = (
            '&lt;script&gt;alert(1)&lt;/script&gt; &lt;svg onload=alert(1)&gt; &lt;img src=x onerror=alert(1)&gt; '
            '<a rel="noopener noreferrer">x</a> <a rel="noopener noreferrer">y</a> z '
            '&lt;p style="color:red"&gt;s&lt;/p&gt; '
    )
    assert body.count(shown) == 2  # the prompt and the solution
    tags = re.findall(r"<[a-zA-Z][^>]*>", body)
    assert [tag for tag in tags if re.search(r"\son\w+=|javascript:|<script|<svg|style=", tag, re.I)] == []


def test_a_slug_of_another_courses_exercise_reaches_nothing_of_it(instructor, people):
    client_other = type(instructor)()
    assert client_other.login(username="otto", password=PASSWORD)
    assert client_other.post(reverse("authoring:new", args=["other"]),
                             {"source": product_yaml(slug="secret-one")}).status_code == 302
    response = created(instructor, product_yaml(slug="secret-one"))
    assert response.status_code == 422
    assert issues(response.content.decode()) == [
        "line 1: slug: the slug 'secret-one' cannot be used (slugs are shared by all courses and the built-in bank); "
        "choose another slug"
    ]
    assert instructor.get(reverse("authoring:version", args=["attn", "secret-one", 1])).status_code == 404
    assert instructor.get(reverse("authoring:export", args=["attn", "secret-one", 1])).status_code == 404
    assert instructor.get(reverse("authoring:version", args=["other", "secret-one", 1])).status_code in (403, 404)
    assert Exercise.objects.get(slug="secret-one").versions.get().created_by.username == "otto"

