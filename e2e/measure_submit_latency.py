"""Median time from clicking "Submit" to the graded feedback appearing, in the browser.

Not collected by a plain `pytest` run (the name does not start with test_); run it on
purpose, with the real pipeline (PostgreSQL + Redis + a Celery worker) like `make test`:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/attnquiz REDIS_URL=redis://127.0.0.1:6379/15 \
        .venv/bin/python -m pytest e2e/measure_submit_latency.py -q -s

On SQLite it measures in-process grading instead, and says so.
The clock is the page's own (performance.now()): it starts in a capturing click listener
on the submit button and stops when the graded fragment is inserted into the page
(a MutationObserver), so Playwright's round trips are not counted. The figures are
printed and written to test-artifacts/submit-latency.json.
"""

from __future__ import annotations

import json
import os
import statistics

import pytest

from courses.models import Assignment
from exercises.models import Variant

pytestmark = pytest.mark.browser

SUBMISSIONS = int(os.environ.get("LATENCY_SUBMISSIONS", "25"))
MEDIAN_BUDGET_MS = float(os.environ.get("LATENCY_BUDGET_MS", "2000"))
WORKED_EXAMPLE = "attention-weights-one-query"

START_CLOCK = """() => {
  window.aqLatencies = [];
  document.addEventListener("click", (event) => {
    if (event.target.closest("#form-weights button[type=submit]")) window.aqClickedAt = performance.now();
  }, true);
  const region = document.getElementById("result-weights");
  new MutationObserver(() => {
    const graded = region.querySelector("[data-result=graded]:not([data-timed])");
    if (graded && window.aqClickedAt !== undefined) {
      graded.dataset.timed = "1";
      window.aqLatencies.push(performance.now() - window.aqClickedAt);
      window.aqClickedAt = undefined;
    }
  }).observe(region, { childList: true, subtree: true });
}"""


def wrong_answers():
    """Answers that are readable but wrong, so the part never closes."""
    while True:
        yield ["0.2500", "0.2500", "0.2500", "0.2500"]
        yield ["0.1000", "0.2000", "0.3000", "0.4000"]


def test_median_submit_to_feedback(student_page, demo_site, grading_pipeline, artifacts):
    page = student_page
    item = demo_site.assignment.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    Assignment.objects.filter(pk=demo_site.assignment.pk).update(attempts_per_part=SUBMISSIONS + 5)
    page.goto(f"/exercises/{item.pk}/")
    assert Variant.objects.filter(assignment_item=item).exists()
    page.evaluate(START_CLOCK)

    answers = wrong_answers()
    cells = page.locator("#grid-weights input")
    for attempt in range(1, SUBMISSIONS + 1):
        for index, value in enumerate(next(answers)):
            cells.nth(index).fill(value)
        page.locator("#form-weights button[type=submit]").click()
        page.locator("#result-weights [data-result=graded]").filter(
            has_text=f"attempt {attempt};"
        ).wait_for()

    latencies = page.evaluate("window.aqLatencies")
    assert len(latencies) == SUBMISSIONS
    summary = {
        "pipeline": grading_pipeline,
        "submissions": SUBMISSIONS,
        "median_ms": round(statistics.median(latencies), 1),
        "p90_ms": round(sorted(latencies)[int(0.9 * (len(latencies) - 1))], 1),
        "min_ms": round(min(latencies), 1),
        "max_ms": round(max(latencies), 1),
        "latencies_ms": [round(value, 1) for value in latencies],
    }
    (artifacts / "submit-latency.json").write_text(json.dumps(summary, indent=2))
    print(
        f"\nsubmit -> feedback over {SUBMISSIONS} submissions ({grading_pipeline} grading): "
        f"median {summary['median_ms']} ms, p90 {summary['p90_ms']} ms, "
        f"min {summary['min_ms']} ms, max {summary['max_ms']} ms"
    )
    assert summary["median_ms"] < MEDIAN_BUDGET_MS
