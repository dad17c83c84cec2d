"""Hostile Markdown becomes inert HTML: exact output for every trick in the table.

Exercise text is shown to students, and library exercises to the staff of every course,
so a live ``javascript:`` link in a prompt runs script with another course's session.
"""

from __future__ import annotations

import pytest

from exercises.html_sanitiser import sanitise_html
from exercises.markdown_math import render_markdown_math

DEAD_LINK = '<p><a rel="noopener noreferrer">notes</a></p>'

HOSTILE_MARKDOWN = [
    # (case, markdown source, exact HTML)
    ("javascript link", "[notes](javascript:alert(document.cookie))", DEAD_LINK),
    ("mixed-case scheme", "[notes](JaVaScRiPt:alert(1))", DEAD_LINK),
    ("vbscript link", "[notes](vbscript:msgbox(1))", DEAD_LINK),
    ("data: link", "[notes](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", DEAD_LINK),
    ("reference link", "[notes][x]\n\n[x]: javascript:alert(1)", DEAD_LINK),
    ("reference link, upper case", "[notes][x]\n\n[x]: JAVASCRIPT:alert(1)", DEAD_LINK),
    ("reference link, data:", "[notes][x]\n\n[x]: data:text/html,<script>alert(1)</script>", DEAD_LINK),
    ("leading spaces", "[notes](   javascript:alert(1))", DEAD_LINK),
    # Markdown reads the bracketed destination as javascript:…, which the sanitiser drops.
    ("angle-bracketed destination", "[notes](<javascript:alert(1)>)", DEAD_LINK),
    # Markdown expands the tab to spaces, and a space ends a scheme: again relative.
    ("tab inside the scheme", "[notes](java\tscript:alert(1))",
     '<p><a href="java    script:alert(1)" rel="noopener noreferrer">notes</a></p>'),
    ("newline inside the scheme (reference)", "[notes][x]\n\n[x]: <java\nscript:alert(1)>",
     '<p><a href="java" rel="noopener noreferrer">notes</a></p>\n<p>script:alert(1)&gt;</p>'),
    # The sanitiser decodes the entity before it checks the scheme: javascript:, dropped.
    ("entity-encoded letter", "[notes](&#106;avascript:alert(1))", DEAD_LINK),
    ("entity-encoded colon", "[notes](javascript&#58;alert(1))", DEAD_LINK),
    ("raw anchor", '<a href="javascript:alert(1)">notes</a>',
     '<p>&lt;a href="javascript:alert(1)"&gt;notes&lt;/a&gt;</p>'),
    ("img onerror", "<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>"),
    ("svg onload", "<svg onload=alert(1)><circle r=5></svg>",
     "<p>&lt;svg onload=alert(1)&gt;&lt;circle r=5&gt;&lt;/svg&gt;</p>"),
    ("iframe", '<iframe src="https://evil.example/"></iframe>',
     '<p>&lt;iframe src="https://evil.example/"&gt;&lt;/iframe&gt;</p>'),
    ("script", "<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
    ("style attribute", '<p style="position:fixed">cover</p>',
     '<p>&lt;p style="position:fixed"&gt;cover&lt;/p&gt;</p>'),
    ("image with a javascript: source", "![x](javascript:alert(1))", "<p>x</p>"),
    ("title that tries to close its quote",
     '[notes](https://example.org/ "a\\" onmouseover=\\"alert(1)")',
     '<p><a href="https://example.org/" title="a\\&quot; onmouseover=\\&quot;alert(1)" '
     'rel="noopener noreferrer">notes</a></p>'),
    # Maths is set aside before Markdown and put back afterwards: inside a link
    # destination its quote used to close the attribute and add a live onmouseover.
    ("maths inside a link destination", '[notes]($" onmouseover="alert(1)$)',
     '<p><a href="$" rel="noopener noreferrer">notes</a></p>'),
]

SAFE_MARKDOWN = [
    ("https link", "[notes](https://example.org/notes)",
     '<p><a href="https://example.org/notes" rel="noopener noreferrer">notes</a></p>'),
    ("http link", "[notes](http://example.org/)",
     '<p><a href="http://example.org/" rel="noopener noreferrer">notes</a></p>'),
    ("mailto link", "[write](mailto:staff@example.org)",
     '<p><a href="mailto:staff@example.org" rel="noopener noreferrer">write</a></p>'),
    ("relative link", "[part a](#part-a) and [chapter](/explore/scaling/)",
     '<p><a href="#part-a" rel="noopener noreferrer">part a</a> and '
     '<a href="/explore/scaling/" rel="noopener noreferrer">chapter</a></p>'),
    ("static image", '![heatmap](/static/attnquiz/favicon.svg "Logo")',
     '<p><img alt="heatmap" src="/static/attnquiz/favicon.svg" title="Logo"></p>'),
    ("emphasis, lists, code", "**bold** _it_ `x_1`\n\n1. one\n2. two",
     "<p><strong>bold</strong> <em>it</em> <code>x_1</code></p>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>"),
    ("aligned table", "| a | b |\n|:--|--:|\n| 1 | 2 |",
     '<table>\n<thead>\n<tr>\n<th align="left">a</th>\n<th align="right">b</th>\n</tr>\n'
     '</thead>\n<tbody>\n<tr>\n<td align="left">1</td>\n<td align="right">2</td>\n</tr>\n'
     "</tbody>\n</table>"),
]

MATH_MARKDOWN = [
    # KaTeX typesets these in the browser (strict, trust: false): they stay text.
    ("inline and display maths", "Use $d_{k}$:\n\n$$\\frac{QK^T}{\\sqrt{d_k}}$$",
     "<p>Use $d_{k}$:</p>\n<p>$$\\frac{QK^T}{\\sqrt{d_k}}$$</p>"),
    ("angle brackets in maths", "$a < b$ and $c > d$", "<p>$a &lt; b$ and $c &gt; d$</p>"),
    ("\\href inside maths stays text", "$\\href{javascript:alert(1)}{x}$",
     "<p>$\\href{javascript:alert(1)}{x}$</p>"),
    ("HTML inside maths stays text", "$<img src=x onerror=alert(1)>$",
     "<p>$&lt;img src=x onerror=alert(1)&gt;$</p>"),
    # data-tex (a derivation step's LaTeX, typeset by the page script) is the feedback's, not
    # an author's: Markdown writes the raw element as text, so no [data-tex] reaches the page.
    ("raw code with data-tex stays text", '<code data-tex="\\href{javascript:alert(1)}{x}">x</code>',
     '<p>&lt;code data-tex="\\href{javascript:alert(1)}{x}"&gt;x&lt;/code&gt;</p>'),
    ("data-tex inside a code span stays text", '`<code data-tex="x">`',
     '<p><code>&lt;code data-tex="x"&gt;</code></p>'),
]


@pytest.mark.parametrize("case,source,expected", HOSTILE_MARKDOWN, ids=[c[0] for c in HOSTILE_MARKDOWN])
def test_hostile_markdown_renders_inert(case, source, expected):
    assert render_markdown_math(source) == expected


@pytest.mark.parametrize("case,source,expected", SAFE_MARKDOWN, ids=[c[0] for c in SAFE_MARKDOWN])
def test_ordinary_markdown_keeps_its_links_and_structure(case, source, expected):
    assert render_markdown_math(source) == expected


@pytest.mark.parametrize("case,source,expected", MATH_MARKDOWN, ids=[c[0] for c in MATH_MARKDOWN])
def test_maths_is_left_as_text_for_katex(case, source, expected):
    assert render_markdown_math(source) == expected


HOSTILE_HTML = [
    ('<a href="javascript:alert(1)" onclick="x()">a</a>', '<a rel="noopener noreferrer">a</a>'),
    ('<a href=" JaVa&#x09;ScRiPt:alert(1)">a</a>', '<a rel="noopener noreferrer">a</a>'),
    ('<a href="&#106;avascript:alert(1)">a</a>', '<a rel="noopener noreferrer">a</a>'),
    ('<a href="https://example.org/" rel="opener" target="_blank">a</a>',
     '<a href="https://example.org/" rel="noopener noreferrer">a</a>'),
    ("<img src=x onerror=alert(1)>", ""),  # x: relative to the page, so one of our own pages
    ('<img src="data:image/svg+xml,<svg onload=alert(1)>">', ""),
    ("<svg><script>alert(1)</script></svg>ok", "ok"),
    ('<iframe src="https://evil.example/"></iframe>ok', "ok"),
    ('<p style="color:red" class="x" id="y">p</p>', "<p>p</p>"),
    ("<style>body{display:none}</style>ok", "ok"),
    ('<form action="https://evil.example/"><input name="q"></form>ok', "ok"),
    ("<object data=x></object><embed src=x>ok", "ok"),
    ("<!-- hidden -->ok", "ok"),
    # data-tex survives on <code> only (a derivation step's LaTeX), every other data-* nowhere
    ('<code data-tex="x^2">x^2</code>', '<code data-tex="x^2">x^2</code>'),
    ('<code DATA-TEX="x">c</code>', '<code data-tex="x">c</code>'),
    ('<p data-tex="x">p</p>', "<p>p</p>"),
    ('<span data-tex="x">s</span>', "s"),
    ('<pre data-tex="x">p</pre>', "<pre>p</pre>"),
    ('<a href="/a" data-tex="x">a</a>', '<a href="/a" rel="noopener noreferrer">a</a>'),
    ('<img src="/static/a.png" data-tex="x">', '<img src="/static/a.png">'),
    ('<code data-x="1" data-math data-tex-rendered="1" data-tex="y">c</code>', '<code data-tex="y">c</code>'),
    ("<code data-tex=x onclick=y style=z class=w id=v>c</code>", '<code data-tex="x">c</code>'),
    # a data-tex value cannot leave its attribute: quotes, < and & come back escaped
    ("<code data-tex='\" onclick=\"alert(1)'>c</code>", '<code data-tex="&quot; onclick=&quot;alert(1)">c</code>'),
    ('<code data-tex="</code><script>alert(1)</script>">c</code>',
     '<code data-tex="&lt;/code&gt;&lt;script&gt;alert(1)&lt;/script&gt;">c</code>'),
    ('<code data-tex="a &amp; b &quot;">c</code>', '<code data-tex="a &amp; b &quot;">c</code>'),
    # kept as text for KaTeX, which with trust off renders \href as an error, never a link
    ('<code data-tex="\\href{javascript:alert(1)}{x}">c</code>',
     '<code data-tex="\\href{javascript:alert(1)}{x}">c</code>'),
]


@pytest.mark.parametrize("source,expected", HOSTILE_HTML)
def test_the_sanitiser_itself_keeps_only_the_allow_list(source, expected):
    assert sanitise_html(source) == expected
