"""The author is told, when a variant is previewed, of every image its page will not show: an
image may load only from the site's static files (``image_source_allowed``), and any other one
becomes its alt text. The check renders each text with the page's own Markdown and names the
images the sanitiser drops, so it warns of those images, no more and no fewer."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse
from django.utils.html import escape

from authoring.image_warnings import image_warnings
from exercises import engine
from exercises.engine.errors import SpecIssue
from exercises.markdown_math import _converter, images_dropped, markdown_with_math, render_markdown_math

IMAGES_READ = [
    # (Markdown, the sources of its images the page drops, in order: all but /static/ paths)
    ("![a](/x)", ["/x"]),
    ('![a b](<x y> "t")', ["x y"]),
    ("![a]( /x \"t\" )", ["/x"]),
    ("![a](/x 't')", ["/x"]),
    ('![a](/x "a "b" c")', ["/x"]),
    ('![a](/x "t)', ['/x "t']),  # an unclosed title is part of the source
    ("![a](/x (t))", ["/x (t)"]),
    ("![a](/x(1)) z", ["/x(1)"]),
    ("![a](/x\\))", ["/x)"]),
    ("![a\\]](/x)", ["/x"]),
    ("![[nested]](/x)", ["/x"]),
    ("![*b* [n] c](/static/a\\_b.png)", []),  # a plain static path is kept
    ("![a](</x>)", ["/x"]),
    ("![a](<x>y)", ["<x>y"]),
    ("![a](\n/x)", ["/x"]),
    ("![a]()", [""]),
    ("![a](/x", []),
    ("x ![a](/s)![b](/t)", ["/s", "/t"]),
    ("!![a](/x)", ["/x"]),
    ("\\![a](/x)", []),  # an escaped "!" leaves a link
    ("\\\\![a](/x)", ["/x"]),  # an escaped backslash does not
    ("[![x](/courses/attn/)](/courses/attn/)", ["/courses/attn/"]),
    ("![a](/static/&#46;&#46;/x)", ["/static/../x"]),  # character references are decoded
    ("![a](/static/x.png?a=1&b=2)", ["/static/x.png?a=1&b=2"]),
    # reference images: "[id]: source" on a line of its own, ids without case
    ("![j][k]\n\n[k]: /courses/", ["/courses/"]),
    ("![a] [k]\n\n[k]: /y", ["/y"]),
    ("![a][]\n\n[a]: /z", ["/z"]),
    ("![k]\n\n[K]: /c", ["/c"]),
    ("[x]: /d\n\n![y][x] ![x][]", ["/d", "/d"]),
    ("![a]\n\n[a]: /z \"t\"", ["/z"]),
    ("![a]\n\n[a]: /z junk", []),
    ("![a][missing]", []),
    # maths and code are not Markdown
    ("`![a](/x)`", []),
    ("``![a](/x)``", []),
    ("`a` ![b](/y) `c`", ["/y"]),
    ("`a\n\nb` ![c](/c)", ["/c"]),  # a code span ends with its paragraph
    ("\\`![a](/x)\\`", ["/x"]),
    ("$![a](/x)$", []),
    ("$$\n![a](/x)\n$$", []),
    ("$a$![b]($c$)$d$", ["$c$"]),
    # blocks
    ("    ![a](/x)", []),  # an indented code block
    ("```\n![a](/x)\n```", []),
    ("> ![q](/q)", ["/q"]),
    ("* ![a](/l)", ["/l"]),
    ("1. a\n\n    ![b](/y)", ["/y"]),
    ("| h |\n|---|\n| ![a](/t) |", ["/t"]),
    ("<b>![a](/x)</b>", ["/x"]),
    # past MAX_LINK_BRACKETS "[" outside maths, no link and no image
    ("[" * 100 + " ![a](/x)", []),
    ("$" + "[" * 200 + "$ ![a](/x)", ["/x"]),
]


def _image_tags(html_text: str) -> int:
    return len(re.findall(r"<img\b", html_text))


@pytest.mark.parametrize(("text", "sources"), IMAGES_READ, ids=[repr(text[:40]) for text, _ in IMAGES_READ])
def test_the_check_names_the_images_the_page_drops(text, sources):
    dropped = images_dropped(text)
    assert [image.source for image in dropped] == sources
    # Exactly those: the page's HTML before the sanitiser has that many more images than after.
    before = markdown_with_math(_converter().reset(), text)
    assert _image_tags(before) - _image_tags(render_markdown_math(text)) == len(sources)


def test_a_dropped_image_is_named_by_its_alt_text_as_the_reader_sees_it():
    assert [(image.alt, image.source) for image in images_dropped("![*b* \\[n\\]](/c) ![](x)")] == [
        ("*b* [n]", "/c"), ("", "x"),
    ]


@pytest.mark.parametrize("text", [
    "![" * 50 + "a" * 10_000,
    "![a](" * 99 + "(" * 9_500,
    "![a](\"" * 99 + "x" * 9_500,
    "![a][" * 50 + "]" * 9_000,
    "`" * 10_000,
    "$" * 10_000,
    "![a]" * 2_000 + "\n[a]: /x\n" * 100,
    "[" * 10_000 + "![a](/x)",
])
def test_a_hostile_text_is_read_in_bounded_time(text):
    started = time.perf_counter()
    images_dropped(text)
    assert time.perf_counter() - started < 1.0


SOURCE = """\
slug: pictures
title: Pictures
version: 1
parameters:
  n: {generator: fixed, value: 3}
prompt: |
  The weights: ![weights heatmap](/static/figures/weights.png)

  And ![the join page](/courses/attn/join?code=XYZ) here.
parts:
  - key: a
    type: numeric
    answer: "n + 1"
    decimals: 0
    prompt: "Figure ![](https://other.example/pixel.png)"
    hints:
      - after: 1
        text: |
          See ![figure {{n}}](/static/figures/fig{{n}}.png?v={{n}}) and ![map][m].

          [m]: data:image/png;base64,iVBORw0KGgo=
    solution: |
      `![code](/courses/)` is code; $![math](/courses/)$ is maths; ![dots](/static/../courses/attn/).
      ![fine](/static/figures/fig{{n}}.png)
"""

KEPT = "only plain /static/… paths (the site's static files) are kept"
NOT_PLAIN = 'is not a plain path (it has a query, "#", "%", space, backslash, "//", "." or ".." segment)'
WARNINGS = [
    SpecIssue(9, "prompt", "the image ![the join page](/courses/attn/join?code=XYZ) will not be shown: its source is "
              f"not under /static/, and {KEPT}. Students see its alt text “the join page” in its place."),
    SpecIssue(15, "parts[0].prompt", "the image ![](https://other.example/pixel.png) will not be shown: its source is "
              f"on another site, and {KEPT}. Students see nothing in its place, as it has no alt text."),
    SpecIssue(19, "parts[0].hints[0].text",
              f"the image ![figure 3](/static/figures/fig3.png?v=3) will not be shown: its source {NOT_PLAIN}, and {KEPT}. "
              "Students see its alt text “figure 3” in its place."),
    SpecIssue(19, "parts[0].hints[0].text", "the image ![map](data:image/png;base64,iVBORw0KGgo=) will "
              f"not be shown: its source is a data: URL, and {KEPT}. Students see its alt text “map” in its place."),
    SpecIssue(23, "parts[0].solution", "the image ![dots](/static/../courses/attn/) will not be shown: its source "
              f"{NOT_PLAIN}, and {KEPT}. Students see its alt text “dots” in its place."),
]


def test_each_image_the_page_drops_is_named_with_its_line_and_why():
    assert image_warnings(engine.load_spec(SOURCE), {"n": 3}) == WARNINGS


def test_an_image_is_placed_on_its_own_line_of_the_text():
    spec = engine.load_spec(SOURCE.replace(
        "prompt: |\n  The weights:", "prompt: |\n  `![x](/x)` ![x](/static/x.png)\n  ![x](/y)\n\n      ![x](/code)\n\n  The weights:"))
    assert [(warning.line, warning.message[:24]) for warning in image_warnings(spec, {"n": 3})][:2] == [
        (8, "the image ![x](/y) will "), (14, "the image ![the join pag"),
    ]


STATIC_ONLY = (
    SOURCE.replace("/courses/attn/join?code=XYZ", "/static/join.png").replace("https://other.example/pixel.png", "/static/p.png")
    .replace("?v={{n}}", "").replace("data:image/png;base64,iVBORw0KGgo=", "/static/map.png")
    .replace("/static/../courses/attn/", "/static/d.png")
)


def test_a_file_with_only_static_images_has_no_warning():
    assert image_warnings(engine.load_spec(STATIC_ONLY), {"n": 3}) == []


def test_the_page_shows_a_dropped_image_as_its_alt_text():
    spec = engine.load_spec(SOURCE)
    assert render_markdown_math(engine.render_prompt(spec, {"n": 3})).split("\n")[:2] == [
        '<p>The weights: <img alt="weights heatmap" src="/static/figures/weights.png"></p>',
        "<p>And the join page here.</p>",
    ]
    assert render_markdown_math(engine.render_part_prompt(spec, {"n": 3}, "a")) == "<p>Figure </p>"


# --------------------------------------------------------------------------- the editor's check and preview


@pytest.fixture
def instructor(client, db):
    from authoring.tests.factories import PASSWORD, people_create

    people_create()
    assert client.login(username="ines", password=PASSWORD)
    return client


def test_the_editors_check_lists_the_warnings_above_the_preview(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": SOURCE, "seed": "0"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "The file is valid" in page  # a warning does not stop the file
    items = "".join(
        f'<li data-line="{w.line}">line {w.line}: {w.path}: {escape(w.message)}</li>' for w in WARNINGS
    )
    assert f'<div class="card" role="note" id="preview-warnings"><strong>5 warnings</strong>\n      <ul>{items}</ul></div>' in page
    assert page.index('id="preview-warnings"') < page.index('<div class="prompt" data-math>')
    assert "<p>And the join page here.</p>" in page


def test_the_editors_check_of_a_file_without_dropped_images_shows_no_warning(instructor):
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": STATIC_ONLY, "seed": "0"})
    page = response.content.decode()
    assert "The file is valid" in page
    assert "preview-warnings" not in page
    assert '<p>And <img alt="the join page" src="/static/join.png"> here.</p>' in page
