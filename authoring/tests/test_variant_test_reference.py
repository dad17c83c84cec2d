""""Test 100 variants" on an exercise whose reference answer is a mistake its own part
diagnoses (the worked example's weights written without the √d_k): every variant fails
with a sentence naming the part and the misconception, and each row still counts the
answers it checked, for the author and for the reviewer who opens the same page."""

from pathlib import Path

from django.urls import reverse
from django.utils.html import escape

import exercises
from authoring import selectors, services

from .factories import PASSWORD

WORKED_EXAMPLE = (Path(exercises.__file__).parent / "bank" / "attention-weights-one-query.yaml").read_text()
UNSCALED = WORKED_EXAMPLE.replace('answer: "attention(Q, K, V).weights[q]"', 'answer: "softmax(scores_q)"')
FLAGGED = (
    "the reference answer of part weights matches the misconception 'no_scaling' (left out √d_k) the part "
    "diagnoses: students who make that mistake would be marked right, and the right answer wrong; "
    "check the part's answer expression"
)


def test_the_report_fails_each_variant_with_the_misconception_and_keeps_the_count(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=UNSCALED)
    report = selectors.version_test_variants(spec=selectors.authoring_spec(version), count=3, first_seed=0)
    assert (report["tested"], report["passed"], report["failed"]) == (3, 0, 3)
    assert [(row["seed"], row["checked"], row["problems"]) for row in report["rows"]] == [
        (0, 20, [FLAGGED]), (1, 20, [FLAGGED]), (2, 20, [FLAGGED]),
    ]


def test_the_page_shows_it_to_the_reviewer(client, people):
    services.exercise_create(course=people.course, actor=people.instructor, source=UNSCALED)
    client.login(username="rita", password=PASSWORD)  # the other instructor, who reviews
    response = client.post(
        reverse("authoring:test", args=["attn", "attention-weights-one-query", 1]), {"first_seed": "0"}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "<strong>0 of 100 variants passed</strong>" in page
    assert page.count(f'<td class="num">20</td>\n      <td><span class="bad">{escape(FLAGGED)}</span>') == 100
