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
