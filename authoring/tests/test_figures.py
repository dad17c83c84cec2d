"""Figures on the authoring pages: the preview of a variant shows its heatmap as students see
it; a figure declared wrong, or one whose matrix a heatmap cannot show, is refused by
"Check" and by saving, with its line, never a 500."""

from html import escape
from pathlib import Path

import pytest
from django.urls import reverse

import exercises
from exercises import engine
from exercises.models import Exercise
from exercises.tests.test_engine_figures import BASE
from explorations.heatmap import heat_level

from .factories import PASSWORD, published_version

HEATMAP_READING = (Path(exercises.__file__).parent / "bank" / "heatmap-reading.yaml").read_text()


@pytest.fixture
def instructor(client, people):
    assert client.login(username="ines", password=PASSWORD)
    return client


def heatmap_cells(weights) -> list[str]:
    return [
        "".join(f'<td class="aq-heatmap__cell aq-heat-{heat_level(value)}">{value:.2f}</td>'
                for value in (float(f"{weight:.2f}") for weight in row))
        for row in weights
    ]


def test_the_preview_of_a_variant_shows_its_heatmap_after_the_prompt(instructor):
    published_version(source=HEATMAP_READING)
    spec = engine.load_spec(HEATMAP_READING)
    weights = engine.draw_variant(spec, 5).params["W"]
    response = instructor.get(reverse("authoring:preview", args=["attn", "heatmap-reading", 1]), {"seed": 5})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.index('<div class="prompt" data-math>') < html.index('<div class="aq-figures">')
    assert html.count('<figure class="aq-heatmap">') == 1
    assert '<caption class="aq-heatmap__title">Attention weights W</caption>' in html
    for index, cells in enumerate(heatmap_cells(weights)):
        assert f'<th scope="row">query {index}</th>\n{cells}\n' in html
    assert "passes — built-in: finite, clear of rounding boundaries, not saturated, figures shown" in html


def test_check_shows_the_heatmap_of_a_valid_source(instructor):
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": HEATMAP_READING, "seed": "0"}).content.decode()
    assert 'id="check-ok"' in html
    weights = engine.draw_variant(engine.load_spec(HEATMAP_READING), 0).params["W"]
    for index, cells in enumerate(heatmap_cells(weights)):
        assert f'<th scope="row">query {index}</th>\n{cells}\n' in html


def test_a_bad_declaration_is_refused_on_its_line_by_check_and_by_saving(instructor):
    source = BASE.replace("    title: Weights\n", "    title: Weights\n    decimals: 9\n")
    issue = escape("line 11: figures[0].decimals: must be a whole number from 0 to 6")
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source}).content.decode()
    assert f'<li data-line="11">{issue}</li>' in html
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": source})
    assert response.status_code == 422
    assert f'<li data-line="11">{issue}</li>' in response.content.decode()
    assert Exercise.objects.count() == 0


@pytest.mark.parametrize(("expression", "detail"), [
    ("zeros(300, 300)", "it is a 300×300 matrix; a heatmap shows at most 12 rows and 12 columns"),
    ("(W - W) / 0", "entry [0][0] is nan, not a finite number"),
    ("S[0]", "it is a vector of 4 numbers, not a matrix (rows × columns); put it in brackets, [v], for a one-row heatmap"),
])
def test_a_matrix_no_heatmap_can_show_is_refused_with_the_figures_line(instructor, expression, detail):
    source = BASE.replace("heatmap: W", f'heatmap: "{expression}"')
    message = f"figure `heatmap: {expression}`: the heatmap cannot be shown for 10 of 10 draws: {detail}"
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source}).content.decode()
    assert "Not valid yet. The exercise does not work: none of seeds 0–9 gives an acceptable variant" in html
    assert f'<li data-line="9" data-field="figures[0].heatmap">line 9: figures[0].heatmap: {escape(message)}</li>' in html
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": source})
    assert response.status_code == 422
    assert f'<li data-line="9">line 9: figures[0].heatmap: {escape(message)}</li>' in response.content.decode()
    assert Exercise.objects.count() == 0


def test_a_named_variant_whose_figure_cannot_be_shown_is_refused(instructor):
    source = BASE.replace("heatmap: W", 'heatmap: "W[0:n]"').replace(
        '  W: {generator: derived, expr: "softmax(S)"}\n',
        '  W: {generator: derived, expr: "softmax(S)"}\n  n: {generator: int_range, min: 1, max: 3}\n',
    ) + "variants:\n  none:\n    n: 0\n"
    html = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source}).content.decode()
    assert "Not valid yet. The exercise does not work for named variant &#x27;none&#x27;: " \
           "The variant draws, but its figures cannot be shown." in html
    assert escape("figure `heatmap: W[0:n]`: the heatmap cannot be shown for 1 of 1 draw: it is an empty 0×4 matrix") in html
