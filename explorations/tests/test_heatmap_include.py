"""The heatmap template include: numbers printed, labels as headers, colour as classes."""

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
