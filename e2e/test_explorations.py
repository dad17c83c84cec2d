"""The explorations in the browser: the d_k slider swaps results in place, the plot draws."""

from __future__ import annotations

import pytest

from explorations import selectors

pytestmark = pytest.mark.browser


def test_slider_updates_the_scaled_and_unscaled_weights(page, transactional_db):
    page.goto("/explore/scaling/")
    assert page.locator("#d-k-value").inner_text() == "64"
    page.locator("#log2-d-k").fill("10")
    page.locator("#scaling-result h2").filter(has_text="1024").wait_for()
    assert page.locator("#log2-d-k").get_attribute("aria-valuetext") == "d_k = 1024"
    demo = selectors.scaling_demo_get(d_k=1024)
    assert page.locator("[data-raw-max]").inner_text() == f"{demo.raw_max_weight:.4f}"
    assert page.locator("[data-scaled-max]").inner_text() == f"{demo.scaled_max_weight:.4f}"
    assert "log2_d_k=10" in page.url
    # Screen readers hear one sentence per change (the live region), not the tables' numbers.
    summary = page.locator("#scaling-summary")
    assert summary.get_attribute("aria-live") == "polite"
    assert summary.inner_text() == (
        f"d_k = 1024: the largest weight is {demo.raw_max_weight:.2f} unscaled and {demo.scaled_max_weight:.2f} scaled."
    )
    assert page.locator("#scaling-result").get_attribute("aria-live") is None
    # The chapter's example below the slider is untouched by the swap.
    assert page.locator("#worked-example-title").count() == 1


def test_variance_page_recomputes_for_another_sample_count(page, transactional_db):
    page.goto("/explore/variance/?samples=2000")
    assert page.locator("#variance-result svg circle").count() == 5
    page.locator("#samples").select_option("20000")
    page.locator("#variance-result caption").filter(has_text="20000 pairs").wait_for()
    rows = selectors.variance_rows_get(samples=20000)
    assert page.locator("tr[data-d-k='1024'] td").nth(1).inner_text() == f"{rows[4].variance:.2f}"
