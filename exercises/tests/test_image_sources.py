"""An image in author-written text may load only from the site's static files.

A browser fetches an ``<img>`` as soon as the page opens, signed in and without a click,
so an image pointing at another page of ours (a join link, an export, an API list) would
make every student who opens the exercise request it. The one sanitiser removes every
other source, and the image becomes its alt text, escaped (nothing without one): an <img>
without a source would show the browser's broken-image icon. A link keeps its address.
"""

from __future__ import annotations

import pytest
from django.conf import settings

from exercises.html_sanitiser import IMAGE_SOURCE_PREFIX, image_source_allowed, sanitise_html
from exercises.markdown_math import render_markdown_math

MARKDOWN_IMAGES = [
    # (case, Markdown, exact HTML)
    ("static file", "![weights](/static/attnquiz/favicon.svg)",
     '<p><img alt="weights" src="/static/attnquiz/favicon.svg"></p>'),
    ("static file with a title", '![w](/static/vendor/katex/fonts/a.woff2 "Font")',
     '<p><img alt="w" src="/static/vendor/katex/fonts/a.woff2" title="Font"></p>'),
    ("a course page of ours", "![join](/courses/attn/join?code=XYZ)", '<p>join</p>'),
    ("an export of ours", "![x](/instructor/attn/gradebook.csv)", '<p>x</p>'),
    ("an API list of ours", "![x](/api/v1/submissions/)", '<p>x</p>'),
    ("logging out", "![bye](/accounts/logout/)", '<p>bye</p>'),
    ("relative to the page", "![x](join?code=1)", '<p>x</p>'),
    ("relative, looking static", "![x](static/attnquiz/favicon.svg)", '<p>x</p>'),
    ("another host", "![tracker](https://other.example/pixel.png)", '<p>tracker</p>'),
    ("scheme-relative host", "![x](//other.example/pixel.png)", '<p>x</p>'),
    ("data: image", "![dot](data:image/png;base64,iVBORw0KGgo=)", '<p>dot</p>'),
    ("leaving static with ..", "![x](/static/../courses/attn/join)", '<p>x</p>'),
    ("leaving static with %2e%2e", "![x](/static/%2e%2e/courses/attn/join)", '<p>x</p>'),
    ("a query on a static file", "![x](/static/attnquiz/favicon.svg?next=/courses/)", '<p>x</p>'),
    ("reference-style image", "![join][j]\n\n[j]: /courses/attn/join", '<p>join</p>'),
    ("alt text with emphasis kept as text", "![*bold* alt](/courses/)", '<p>*bold* alt</p>'),
    ("a link to our page stays a link", "[join the course](/courses/attn/join)",
     '<p><a href="/courses/attn/join" rel="noopener noreferrer">join the course</a></p>'),
    ("an image inside a link: the link stays, the image loses its source",
     "[![x](/courses/attn/)](/courses/attn/)",
     '<p><a href="/courses/attn/" rel="noopener noreferrer">x</a></p>'),
    ("no alt text: nothing at all", "Before ![](/courses/attn/join) after.", "<p>Before  after.</p>"),
    ("alt text with markup stays text", '![<b>a</b> & "q" <script>x</script>](https://other.example/p.png)',
     '<p>&lt;b&gt;a&lt;/b&gt; &amp; "q" &lt;script&gt;x&lt;/script&gt;</p>'),
    ("alt text with a character reference", "![&lt;b&gt; &amp;amp;](/courses/)", "<p>&lt;b&gt; &amp;amp;</p>"),
    ("a title goes with the source", '![w](/courses/ "Title")', "<p>w</p>"),
    ("a kept image beside a dropped one", "![ok](/static/a.png) ![no](/courses/)",
     '<p><img alt="ok" src="/static/a.png"> no</p>'),
]


@pytest.mark.parametrize("case,source,expected", MARKDOWN_IMAGES, ids=[c[0] for c in MARKDOWN_IMAGES])
def test_an_image_loads_only_from_the_static_files(case, source, expected):
    assert render_markdown_math(source) == expected


HTML_IMAGES = [
    # (HTML reaching the sanitiser, exact result)
    ('<img src="/static/attnquiz/favicon.svg" alt="a">', '<img src="/static/attnquiz/favicon.svg" alt="a">'),
    ('<img src="/courses/attn/join" alt="a">', 'a'),
    ('<img src="/static/&#46;&#46;/courses/" alt="a">', 'a'),  # entities decoded first
    ('<img src="/static\\..\\courses\\" alt="a">', 'a'),  # a browser reads \ as /
    ('<img src="/static//other.example/x.png" alt="a">', 'a'),
    ('<img src=" /static/a.png" alt="a">', 'a'),
    ('<img src="/STATIC/a.png" alt="a">', 'a'),
    ('<img src="/static/" alt="a">', 'a'),
    ('<img src="/static/./a.png" alt="a">', 'a'),
    ('<img src="/static/a.png#x" alt="a">', 'a'),
    ('<img src="https://other.example/x.png" alt="a">', 'a'),
    ('<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="a">', 'a'),
    # the alt text comes back as text, escaped; without one, nothing is left
    ('<p>x<img src="/courses/" alt="a<b>&quot;c&amp;d">y</p>', '<p>xa&lt;b&gt;"c&amp;dy</p>'),
    ('<img alt="&lt;script&gt;alert(1)&lt;/script&gt;" src="/courses/">', '&lt;script&gt;alert(1)&lt;/script&gt;'),
    ('<IMG SRC=/courses/ ALT=up TITLE=t>', 'up'),
    ('<img src="/courses/">', ''),
    ('<img>', ''),
    ('<img src="/courses/" alt="">', ''),
    ('<img alt="a>b" src="/static/a.png">', '<img alt="a&gt;b" src="/static/a.png">'),
    ('&lt;img alt="x"&gt;', '&lt;img alt="x"&gt;'),  # text that reads like a tag stays text
    ('<a href="/courses/attn/join">j</a>', '<a href="/courses/attn/join" rel="noopener noreferrer">j</a>'),
]


@pytest.mark.parametrize("source,expected", HTML_IMAGES)
def test_the_sanitiser_removes_every_other_image_source(source, expected):
    assert sanitise_html(source) == expected


@pytest.mark.parametrize(("source", "allowed"), [
    ("/static/attnquiz/favicon.svg", True),
    ("/static/vendor/katex/katex.min.css", True),
    ("/static/a-b_c~d.1.png", True),
    ("/static/a/../b.png", False),
    ("/static/..", False),
    ("/static/a%20b.png", False),
    ("/static/a.png?v=1", False),
    ("/static/a b.png", False),
    ("/static/a\tb.png", False),
    ("/staticx/a.png", False),
    ("static/a.png", False),
    ("", False),
])
def test_image_source_allowed(source, allowed):
    assert image_source_allowed(source) is allowed


def test_the_allowed_prefix_is_where_the_site_serves_its_static_files():
    assert IMAGE_SOURCE_PREFIX == "/" + settings.STATIC_URL.lstrip("/")
