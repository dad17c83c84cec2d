"""The pre-flight page: before any student answers, the spread over 200 seeds of what
makes a variant easier, for staff of the course only."""

from pathlib import Path

import pytest
from django.urls import reverse

import exercises
from authoring import selectors
from exercises import engine

from .factories import PASSWORD, product_yaml, published_version

BANK = Path(exercises.__file__).parent / "bank"


def bank_version(slug):
    return published_version(source=(BANK / f"{slug}.yaml").read_text())


@pytest.mark.parametrize(
    ("username", "get_code", "post_code"),
    [(None, 302, 302), ("sam", 403, 403), ("tariq", 200, 200), ("ines", 200, 200), ("otto", 404, 404)],
)
def test_only_the_course_staff_reach_the_page(client, people, username, get_code, post_code):
    published_version(source=product_yaml())
    if username:
        client.login(username=username, password=PASSWORD)
    url = reverse("authoring:preflight", args=["attn", "product", 1])
    assert client.get(url).status_code == get_code
    assert client.post(url).status_code == post_code


def test_the_spread_of_a_weights_exercise_over_200_seeds(client, people):
    bank_version("softmax-weights-from-scores")
    client.login(username="ines", password=PASSWORD)
    url = reverse("authoring:preflight", args=["attn", "softmax-weights-from-scores", 1])
    assert 'id="preflight"' not in client.get(url).content.decode()  # nothing is drawn until asked
    page = client.post(url).content.decode()
    assert '<p id="preflight-summary">200 seeds drawn.</p>' in page
    for feature in ('data-feature="top_weight"', 'data-feature="magnitude"', 'data-feature="digits"'):
        assert feature in page
    assert '<table class="data" data-parameter="a">' in page


def test_the_spread_numbers_come_from_the_gated_draws():
    spec = engine.load_spec((BANK / "softmax-weights-from-scores.yaml").read_text())
    spread = selectors.version_variant_spread(spec=spec, seeds=200)
    by_feature = {f["spread"].feature: f["spread"] for f in spread["features"]}
    top = by_feature["top_weight"]
    # the gate keeps every row's largest weight at or below 0.9; 4 keys make 0.25 uniform
    assert 0.25 < top.minimum <= top.median <= top.maximum <= 0.9
    assert by_feature["magnitude"].maximum == 4.0  # scores are drawn from 0..4
    assert sum(bar["count"] for bar in spread["features"][0]["chart"]["bars"]) == 200
    assert spread["unusable"] == 0
    assert sum(count for _, count in dict((p["name"], p["bars"]) for p in spread["parameters"])["a"]) == 200


def test_a_source_that_cannot_draw_is_counted_not_a_crash():
    never = product_yaml().replace("parts:", 'gates:\n  max_attempts: 2\n  checks:\n    - {kind: require, expr: "a > 99", reason: never}\nparts:')
    spread = selectors.version_variant_spread(spec=engine.load_spec(never), seeds=5)
    assert (spread["seeds"], spread["unusable"], spread["features"]) == (5, 5, [])
