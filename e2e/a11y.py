"""Accessibility and layout checks the browser tests run on a page.

axe-core (e2e/vendor/axe.min.js, test tooling only) is evaluated in the page through
Playwright, which is not subject to the page's Content-Security-Policy, so the product
pages never serve it and the enforced policy stays as strict as in production.
"""

from __future__ import annotations

from pathlib import Path

AXE_SOURCE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
BLOCKING_IMPACTS = ("serious", "critical")

_axe_script: str | None = None


def axe_violations(page, watch) -> list[dict]:
    """axe-core's serious and critical violations on the page as it is now.

    axe adds a <style> element of its own while it runs, which the page's CSP (rightly)
    refuses; those reports are axe's, not the page's, and are dropped from ``watch``.
    """
    global _axe_script
    csp_seen = len(watch.csp_violations)
    if _axe_script is None:
        _axe_script = AXE_SOURCE.read_text(encoding="utf-8")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_script)
    results = page.evaluate(
        """async () => {
          const result = await window.axe.run(document, {resultTypes: ["violations"]});
          return result.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help,
            targets: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
          }));
        }"""
    )
    page.evaluate("() => new Promise(resolve => setTimeout(resolve, 0))")  # let reports arrive
    del watch.csp_violations[csp_seen:]
    return [violation for violation in results if violation["impact"] in BLOCKING_IMPACTS]


def horizontal_overflow(page) -> dict:
    """How far the page scrolls sideways (0 when it does not) and which elements stick out."""
    return page.evaluate(
        """() => {
          const width = window.innerWidth;
          const wide = [];
          for (const el of document.body.querySelectorAll("*")) {
            const box = el.getBoundingClientRect();
            if (box.right > width + 0.5 && getComputedStyle(el).position !== "fixed") {
              let clipped = false;
              for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
                const style = getComputedStyle(up);
                if (style.overflowX !== "visible" && up.getBoundingClientRect().right <= width + 0.5) { clipped = true; break; }
              }
              if (!clipped) wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : ""));
            }
          }
          return {scrollWidth: document.documentElement.scrollWidth, innerWidth: width, wide: wide.slice(0, 8)};
        }"""
    )


def heading_problems(page) -> list[str]:
    """Headings out of order: the first is not an h1, or a level is skipped going down."""
    levels = page.evaluate(
        "() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]"
        ".filter(h => h.getClientRects().length).map(h => [Number(h.tagName[1]), h.textContent.trim()])"
    )
    problems = []
    if levels and levels[0][0] != 1:
        problems.append(f"first heading is h{levels[0][0]}: {levels[0][1]!r}")
    for (before, _), (level, text) in zip(levels, levels[1:]):
        if level > before + 1:
            problems.append(f"h{before} then h{level}: {text!r}")
    return problems


def settle(page) -> None:
    """Wait for the page's scripts (KaTeX typesetting, htmx) to finish."""
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => !document.querySelector('[data-math]:not([data-math-rendered])')")
    # Scroll boxes become focusable on the frame after a resize.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def check_page(page, watch, *, artifacts: Path, name: str) -> dict:
    """Screenshots at 390 × 844 and 1280 × 800, the overflow at 390 px, axe at both widths.

    Returns what was seen so the test asserts it (and the failure message names the page).
    """
    seen = {"name": name, "overflow": None, "axe": {}, "headings": heading_problems(page)}
    for label, viewport in (("390", PHONE), ("1280", DESKTOP)):
        page.set_viewport_size(viewport)
        settle(page)
        if viewport is PHONE:
            seen["overflow"] = horizontal_overflow(page)
        (artifacts / label).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=artifacts / label / f"{name}.png", full_page=True)
        seen["axe"][label] = axe_violations(page, watch)
    return seen
