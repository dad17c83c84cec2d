"""KaTeX typesets exercise maths under the CSP, strictly and without trusting commands
that make links or raw HTML."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_katex_renders_maths_but_not_links_or_html_commands(page, transactional_db):
    page.goto("/explore/")
    result = page.evaluate(
        r"""() => {
          const box = document.createElement("div");
          box.setAttribute("data-math", "");
          box.textContent = "$\\frac{QK^T}{\\sqrt{d_k}}$ $\\href{javascript:alert(1)}{notes}$ " +
                            "$\\htmlId{x}{y}$ $\\url{https://example.org}$";
          document.body.appendChild(box);
          window.attnquiz.renderMath(box);
          return {
            typeset: box.querySelectorAll(".katex").length,
            links: box.querySelectorAll("a").length,
            ids: box.querySelectorAll("#x").length,
            errors: Array.from(box.querySelectorAll(".katex-error")).map((e) => e.textContent),
            untrusted: Array.from(box.querySelectorAll(".katex .mord.text")).map((e) => e.textContent),
          };
        }"""
    )
    # The fraction is typeset; \href and \url are shown as their (red) command names,
    # \htmlId is a parse error: no link, no id, no HTML from maths.
    assert result == {
        "typeset": 3,
        "links": 0,
        "ids": 0,
        "errors": ["\\htmlId{x}{y}"],
        "untrusted": ["\\href", "\\url"],
    }


def test_katex_caps_sizes_so_maths_cannot_cover_the_page(page, transactional_db):
    page.goto("/explore/")
    height = page.evaluate(
        r"""() => {
          const box = document.createElement("div");
          box.setAttribute("data-math", "");
          box.textContent = "$$\\rule{1000000px}{1000000px}$$";
          document.body.appendChild(box);
          window.attnquiz.renderMath(box);
          return box.getBoundingClientRect().height;
        }"""
    )
    # maxSize 20 em: the rule is at most 20 em (about 320 px at 16 px) high, not a million pixels.
    assert 100 < height < 600
