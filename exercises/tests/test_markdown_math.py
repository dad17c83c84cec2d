import pytest

from exercises.markdown_math import render_markdown_math


def test_math_survives_markdown_untouched():
    html = render_markdown_math("Use $d_{k}$ and $W_Q$ here:\n\n$$\\frac{a_1}{b_2}$$")
    assert "$d_{k}$" in html and "$W_Q$" in html
    assert "$$\\frac{a_1}{b_2}$$" in html
    assert "<em>" not in html


def test_markdown_is_rendered_and_raw_html_escaped():
    html = render_markdown_math("**bold** <script>alert(1)</script>")
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_math_with_angle_brackets_is_escaped():
    assert "$a &lt; b$" in render_markdown_math("$a < b$")


@pytest.mark.parametrize(("source", "shown"), [
    ("Use `x < 3` here", "<p>Use <code>x &lt; 3</code> here</p>"),
    ("`a & b`", "<p><code>a &amp; b</code></p>"),
    ("    W < 1 & V\n", "<pre><code>W &lt; 1 &amp; V\n</code></pre>"),
    ("x < 3 and a & b", "<p>x &lt; 3 and a &amp; b</p>"),
    ("<b>bold</b>", "<p>&lt;b&gt;bold&lt;/b&gt;</p>"),
    ("<div onclick=\"x\">hi</div>", "<p>&lt;div onclick=\"x\"&gt;hi&lt;/div&gt;</p>"),
    ("<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
])
def test_raw_html_is_text_and_code_is_escaped_once(source, shown):
    assert render_markdown_math(source) == shown
