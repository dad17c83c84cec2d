"""A figure on the student's pages: the bank's heatmap-reading exercise shows its weights as
a heatmap after the prompt (every cell printing its number), on the assignment's page, in
practice and through the API, read from the variant's stored body, never evaluated per view."""

import pytest
from django.test import Client
from django.urls import reverse

from api.services import api_token_create
from courses.models import AssignmentItem
from exercises import engine
from exercises.models import Variant
from explorations.heatmap import heat_level

HEATMAP_READING = "heatmap-reading"


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=HEATMAP_READING)


def login(client, username):
    assert client.login(username=username, password="attention-demo")


def heatmap_rows(weights) -> list[str]:
    """The cells of each row as the page prints them: two decimals, a colour class each."""
    rows = []
    for row in weights:
        shown = [float(f"{weight:.2f}") for weight in row]
        rows.append("".join(f'<td class="aq-heatmap__cell aq-heat-{heat_level(value)}">{value:.2f}</td>' for value in shown))
    return rows


def assert_heatmap_of(html: str, weights) -> None:
    assert html.count('<figure class="aq-heatmap">') == 1
    assert '<caption class="aq-heatmap__title">Attention weights W</caption>' in html
    assert "".join(f'<th scope="col">key {j}</th>' for j in range(4)) in html
    assert '<span class="aq-visually-hidden">query / key</span>' in html
    for index, cells in enumerate(heatmap_rows(weights)):
        assert f'<th scope="row">query {index}</th>\n{cells}\n' in html


def test_the_student_reads_the_heatmap_after_the_prompt_not_a_matrix(client, item):
    login(client, "student1")
    response = client.get(reverse("exercise", args=[item.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    assert_heatmap_of(html, variant.params["W"])
    prompt = html.index('<div class="prompt" data-math>')
    # Under the shared prompt that introduces it, before the parts' questions (a), (b), (c).
    assert prompt < html.index('<div class="aq-figures">') < html.index('<div class="prompt prompt-parts" data-math><p><strong>(a)</strong>')
    assert html.index('<div class="prompt prompt-parts"') < html.index('id="part-brightest_key"')
    assert html.count("<strong>(a)</strong> Which key does query") == 1
    shared_prompt = html[prompt:html.index("</p>", prompt)]  # before the parts' own paragraphs
    assert "The heatmap below prints every cell" in shared_prompt and "bmatrix" not in shared_prompt


def test_the_figure_is_stored_with_the_variant_and_not_evaluated_again_per_view(client, item, monkeypatch):
    login(client, "student1")
    client.get(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=item)
    (figure,) = variant.rendered["figures"]
    assert figure["rows"] == [[float(f"{weight:.2f}") for weight in row] for row in variant.params["W"]]

    def never(*args, **kwargs):
        raise AssertionError("a page view evaluated the figure")

    monkeypatch.setattr(engine, "render_figures", never)
    again = client.get(reverse("exercise", args=[item.pk]))
    assert again.status_code == 200
    assert_heatmap_of(again.content.decode(), variant.params["W"])


def test_a_body_stored_in_the_first_format_is_rendered_again_once(client, demo):
    # Format 1 escaped code spans twice, printed shares such as 1/6 as 0.17 and had no figures.
    worked = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )
    login(client, "student1")
    client.get(reverse("exercise", args=[worked.pk]))
    variant = Variant.objects.get(student__username="student1", assignment_item=worked)
    current = variant.rendered
    old_body = {key: value for key, value in current.items() if key != "figures"} | {"format": 1, "prompt": "<p>old</p>"}
    Variant.objects.filter(pk=variant.pk).update(rendered=old_body)
    html = client.get(reverse("exercise", args=[worked.pk])).content.decode()
    assert "<p>old</p>" not in html and current["prompt"] in html
    variant.refresh_from_db()
    assert variant.rendered == current and variant.rendered["format"] == 3 and variant.rendered["figures"] == []


def test_a_practice_variant_shows_its_own_heatmap(client, item):
    login(client, "student1")
    response = client.post(reverse("practice_start", args=[item.pk]))
    variant = Variant.objects.get(student__username="student1", context__startswith="practice:")
    assert response["Location"] == reverse("practice", args=[variant.pk])
    assert_heatmap_of(client.get(response["Location"]).content.decode(), variant.params["W"])


def test_the_api_sends_the_figure_as_data(item, django_user_model):
    student = django_user_model.objects.get(username="student1")
    secret = api_token_create(user=student, name="figures", scope="read", lifetime_days=7)[1]
    body = Client(HTTP_AUTHORIZATION=f"Bearer {secret}").get(f"/api/v1/exercises/{item.pk}/").json()
    variant = Variant.objects.get(student=student, assignment_item=item)
    assert body["figures"] == [{
        "kind": "heatmap",
        "title": "Attention weights W",
        "rows": [[float(f"{weight:.2f}") for weight in row] for row in variant.params["W"]],
        "row_labels": ["query 0", "query 1", "query 2", "query 3"],
        "col_labels": ["key 0", "key 1", "key 2", "key 3"],
        "decimals": 2,
        "range": [0.0, 1.0],
    }]
    assert "W \\approx" not in body["prompt_html"]
