"""Exploration endpoints: exact numbers in, exact numbers out, refusals for bad input."""

import uuid

import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse

from explorations import selectors
from grading.core.attention import variance_table

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def empty_cache(settings):
    """An empty cache of this test's own. Clearing the shared Redis instead would wipe what
    tests running beside it keep there (a rate limit's bucket, pending follow-ups)."""
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": f"explorations-{uuid.uuid4().hex}",
    }}
    yield
    cache.clear()


def test_scaling_json_returns_the_selector_numbers(client):
    response = client.get(reverse("explorations:scaling-json"), {"d_k": 16, "seed": 3})
    assert response.status_code == 200
    data = response.json()
    expected = selectors.scaling_demo_get(d_k=16, seed=3)
    assert data["d_k"] == 16
    assert data["seed"] == 3
    assert data["raw_weights"] == expected.raw_weights
    assert data["scaled_weights"] == expected.scaled_weights
    assert data["predicted_score_std"] == 4.0
    assert len(data["raw_scores"]) == 8


def test_scaling_json_reads_the_slider_exponent(client):
    data = client.get(reverse("explorations:scaling-json"), {"log2_d_k": 10}).json()
    assert data["d_k"] == 1024
    assert data["predicted_score_std"] == 32.0


@pytest.mark.parametrize(
    "params",
    [{"d_k": 0}, {"d_k": 2048}, {"d_k": "wide"}, {"log2_d_k": 11}, {"seed": -1}],
)
def test_scaling_json_refuses_bad_parameters(client, params):
    response = client.get(reverse("explorations:scaling-json"), params)
    assert response.status_code == 400
    assert "error" in response.json()


def test_scaling_page_shows_the_chapter_worked_example(client):
    response = client.get(reverse("explorations:scaling"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html
    for chapter_weight in ("0.5344", "0.0723", "0.1966", "0.3875", "0.1425", "0.2350"):
        assert f">{chapter_weight}</td>" in html
    assert 'value="6"' in html  # slider at log2(64)


def test_scaling_fragment_for_htmx_has_no_page_around_it(client):
    response = client.get(reverse("explorations:scaling"), {"log2_d_k": 8}, **HTMX)
    html = response.content.decode()
    demo = selectors.scaling_demo_get(d_k=256)
    assert response.status_code == 200
    assert "<html" not in html
    assert "$d_k = 256$" in html
    assert f"<td data-raw-max>{demo.raw_max_weight:.4f}</td>" in html
    assert html.count('class="aq-heatmap__cell') == 16


def _header_labels(table_html):
    import re

    return re.findall(r'<th scope="col">([^<]*)</th>', table_html), re.findall(r'<th scope="row">([^<]*)</th>', table_html)


def test_scaling_keys_are_numbered_from_0_as_in_the_exercises(client):
    """The exercises number tokens and keys from 0 ("key 0" in a heatmap, "token 0" in a
    prompt); this page said k1..k8, so a student's key 2 here was key 1 there."""
    html = client.get(reverse("explorations:scaling"), {"log2_d_k": 4}, **HTMX).content.decode()
    columns, rows = _header_labels(html[:html.index("</figure>")])
    assert columns == ["key 0", "key 1", "key 2", "key 3", "key 4", "key 5", "key 6", "key 7"]
    assert rows == ["unscaled", "scaled by 1/√d_k"]
    page = client.get(reverse("explorations:scaling")).content.decode()
    assert "keys $k_0, \\dots, k_{ 7 }$" in page
    assert "k_1," not in page and ">k1<" not in page


def test_the_worked_example_numbers_its_queries_and_keys_from_0_beside_the_words(client):
    html = client.get(reverse("explorations:scaling")).content.decode()
    worked = html[html.index('id="worked-example-title"'):]
    columns, rows = _header_labels(worked)
    assert columns == ["key 0 (Order)", "key 1 (was)", "key 2 (late)", "key 3 (it)"] * 2
    assert rows == ["query 0 (Order)", "query 1 (was)", "query 2 (late)", "query 3 (it)"] * 2


def test_variance_json_is_the_core_monte_carlo_table(client):
    response = client.get(reverse("explorations:variance-json"), {"samples": 2000})
    assert response.status_code == 200
    data = response.json()
    expected = variance_table((4, 16, 64, 256, 1024), 2000, seed=0)
    assert data["samples"] == 2000
    assert [row["d_k"] for row in data["rows"]] == [4, 16, 64, 256, 1024]
    assert [row["variance"] for row in data["rows"]] == [e.variance for e in expected]
    assert [row["mean"] for row in data["rows"]] == [e.mean for e in expected]
    assert [row["predicted_variance"] for row in data["rows"]] == [4.0, 16.0, 64.0, 256.0, 1024.0]


def test_variance_json_defaults_to_twenty_thousand_samples_and_tracks_d_k(client):
    data = client.get(reverse("explorations:variance-json")).json()
    assert data["samples"] == 20_000
    ratios = np.array([row["variance_ratio"] for row in data["rows"]])
    assert np.all(np.abs(ratios - 1) < 0.05)


def test_variance_refuses_unlisted_sample_counts_without_computing(client, monkeypatch):
    monkeypatch.setattr(selectors, "_compute_variance_rows", pytest.fail)
    response = client.get(reverse("explorations:variance-json"), {"samples": 10**8})
    assert response.status_code == 400
    page = client.get(reverse("explorations:variance"), {"samples": "many"})
    assert page.status_code == 400
    assert "Choose a sample count" in page.content.decode()


def test_variance_page_draws_table_and_plot(client):
    response = client.get(reverse("explorations:variance"), {"samples": 2000})
    html = response.content.decode()
    rows = selectors.variance_rows_get(samples=2000)
    assert response.status_code == 200
    assert html.count("<circle ") == 5
    assert 'stroke-dasharray="6 4"' in html  # the y = d_k reference line
    assert html.count('<tr data-d-k="') == 5
    assert f"<td>{rows[4].variance:.2f}</td>" in html
    assert '<option value="2000" selected>' in html


def test_variance_fragment_for_htmx(client):
    response = client.get(reverse("explorations:variance"), {"samples": 2000}, **HTMX)
    html = response.content.decode()
    assert "<html" not in html
    assert "<svg" in html


def test_index_links_both_explorations(client):
    html = client.get(reverse("explorations:index")).content.decode()
    assert reverse("explorations:scaling") in html
    assert reverse("explorations:variance") in html
