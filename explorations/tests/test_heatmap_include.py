"""The heatmap template include: numbers printed, labels as headers, colour as classes."""

import pytest
from django.template.loader import render_to_string


def test_heatmap_include_prints_every_number_with_labels_and_colour_classes():
    html = render_to_string(
        "grading/_heatmap.html",
        {
            "rows": [[0.5344, 0.0723], [0.0, 1.0]],
            "row_labels": ["it", "was"],
            "col_labels": ["Order", "late"],
            "title": "Your weights",
        },
    )
    assert "<caption class=\"aq-heatmap__title\">Your weights</caption>" in html
    assert '<th scope="col">Order</th>' in html
    assert '<th scope="row">was</th>' in html
    assert '<td class="aq-heatmap__cell aq-heat-11">0.5344</td>' in html
    assert '<td class="aq-heatmap__cell aq-heat-1">0.0723</td>' in html
    assert '<td class="aq-heatmap__cell aq-heat-0">0.0000</td>' in html
    assert '<td class="aq-heatmap__cell aq-heat-20">1.0000</td>' in html
    assert html.count("<td class=\"aq-heatmap__cell") == 4


def test_heatmap_include_honours_decimals_and_works_without_labels():
    html = render_to_string("grading/_heatmap.html", {"rows": [[0.12345]], "decimals": 2})
    assert '<td class="aq-heatmap__cell aq-heat-2">0.12</td>' in html
    assert "<thead>" not in html
    assert "<caption" not in html


@pytest.mark.parametrize("places", [1, 2, 4, 6])
def test_a_cells_number_reads_exactly_as_floatformat_prints_it(places):
    import random

    from django.template.defaultfilters import floatformat

    from explorations.templatetags.attnquiz_heatmap import weight_text

    rng = random.Random(places)
    numbers = [0, 1, -1, 0.0, -0.0, 0.5, -0.5, 5e-05, -1e-05, 0.12345, 2.5e-05, 1e-10, 0.99995, 0.00015,
               123456.78915, 1.0000000000000002, 1 / 3, 2 / 3]
    numbers += [rng.random() for _ in range(300)] + [rng.uniform(-2, 2) for _ in range(300)]
    numbers += [round(rng.random(), places + 1) for _ in range(300)]  # many ties at the last place
    for number in numbers:
        assert weight_text(number, places) == floatformat(number, places), number


def test_what_is_not_a_finite_number_reads_as_floatformat_prints_it():
    from django.template.defaultfilters import floatformat

    from explorations.templatetags.attnquiz_heatmap import weight_text

    for value in (float("nan"), float("inf"), None, "x", "0.25", True):
        assert weight_text(value, 4) == floatformat(value, 4)
    assert weight_text(0.25, "x") == floatformat(0.25, "x")


def test_heatmap_marks_off_cells_and_escapes_every_label_and_title():
    html = render_to_string(
        "grading/_heatmap.html",
        {
            "rows": [[0.25, 0.75]],
            "off": [[False, True]],
            "row_labels": ["<b>q</b>"],
            "col_labels": ["it's", "a&b"],
            "title": "<script>alert(1)</script>",
        },
    )
    assert '<caption class="aq-heatmap__title">&lt;script&gt;alert(1)&lt;/script&gt;</caption>' in html
    assert '<th scope="col">it&#x27;s</th><th scope="col">a&amp;b</th>' in html
    assert '<th scope="row">&lt;b&gt;q&lt;/b&gt;</th>' in html
    assert '<td class="aq-heatmap__cell aq-heat-5">0.2500</td>' in html
    assert (
        '<td class="aq-heatmap__cell aq-heat-15 is-off">0.7500<span class="aq-heatmap__mark" aria-hidden="true">✗</span>'
        '<span class="aq-visually-hidden"> (off)</span></td>'
    ) in html
    assert "<script>" not in html


def test_heatmap_rows_without_labels_or_marks_have_no_header_cells():
    html = render_to_string("grading/_heatmap.html", {"rows": [[0.5], [0.5]], "col_labels": ["k"]})
    assert '<td class="aq-heatmap__corner">' not in html  # no row labels: no corner cell
    assert '<th scope="row">' not in html
    assert html.count('<td class="aq-heatmap__cell aq-heat-10">0.5000</td>') == 2
    assert "is-off" not in html


def test_a_scale_other_than_weights_colours_from_low_to_high_and_decimals_may_be_zero():
    from explorations.templatetags.attnquiz_heatmap import heatmap_table

    html = heatmap_table([[-5, -3, 0, 1.6, 3]], decimals=0, scale=[-3.0, 3.0])
    assert ('<td class="aq-heatmap__cell aq-heat-0">-5</td><td class="aq-heatmap__cell aq-heat-0">-3</td>'
            '<td class="aq-heatmap__cell aq-heat-10">0</td><td class="aq-heatmap__cell aq-heat-15">2</td>'
            '<td class="aq-heatmap__cell aq-heat-20">3</td>') in html
    assert heatmap_table([[0.5]], scale=(0, 1)) == heatmap_table([[0.5]])


def test_an_exercise_figure_is_drawn_with_its_labels_corner_and_decimals():
    html = render_to_string("exercises/_figures.html", {"figures": [{
        "kind": "heatmap", "title": "Scores <S>", "rows": [[0.12, 0.88], [0.5, 0.5]],
        "row_labels": ["token 0", "token 1"], "col_labels": ["token 0", "token 1"], "corner": "token / token",
        "decimals": 2, "range": [0.0, 1.0],
    }]})
    assert html.startswith('<div class="aq-figures"><figure class="aq-heatmap">')
    assert '<caption class="aq-heatmap__title">Scores &lt;S&gt;</caption>' in html
    assert '<span class="aq-visually-hidden">token / token</span>' in html
    assert ('<th scope="row">token 0</th>\n<td class="aq-heatmap__cell aq-heat-2">0.12</td>'
            '<td class="aq-heatmap__cell aq-heat-18">0.88</td>\n') in html
    assert render_to_string("exercises/_figures.html", {"figures": []}).strip() == ""


@pytest.mark.parametrize(("value", "places", "text"), [
    (1e30, 4, "1e+30"), (-3e30, 4, "-3e+30"), (1.7976931348623157e308, 6, "1.79769e+308"),
    (1e24, 4, "1e+24"), (1e24, 2, "1e+24"), (1e15, 4, "1e+15"),
    (999999999999999.9, 4, "999999999999999.9000"), (123456789012.5, 2, "123456789012.50"),
    (1e-300, 4, "0.0000"), (-1e-300, 6, "0.000000"), (0.25, 10**9, "0.25000000000000000000"),
])
def test_any_finite_number_prints_even_one_the_default_decimal_context_could_not_round(value, places, text):
    # The default context's 28 digits raised InvalidOperation from 1e24 at 4 places: a student
    # who typed 1e30 into a weights grid got a 500 on every page showing that answer.
    from explorations.templatetags.attnquiz_heatmap import weight_text

    assert weight_text(value, places) == text


def test_a_result_heatmap_of_a_huge_answer_renders():
    from explorations.templatetags.attnquiz_heatmap import heatmap_table

    html = heatmap_table([[1e30, -1e30, 1e308, 0.5]], decimals=4)
    assert ">1e+30<" in html and ">-1e+30<" in html and ">1e+308<" in html and ">0.5000<" in html
