"""Smoke-test a running `make run`: a demo student answers the worked example twice.

Logs in as student1 in Debian's Chromium, opens the worked-example exercise, submits the
unscaled weights (a typical slip) and then the right weights, and prints what the page
showed each time. Reads the student's variant from the same database the server uses
(DATABASE_URL, default the embedded SQLite file) to know the answers.

    make run   # in one terminal
    .venv/bin/python scripts/smoke_demo.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "attnquiz.settings")
os.environ.setdefault("DEBUG", "1")
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM reads beside Playwright's event loop

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def weights_for(username: str) -> tuple[int, list[float], list[float]]:
    """(item id, right weights, unscaled weights) of the student's worked-example variant."""
    import numpy as np

    from exercises import engine
    from exercises.models import Variant
    from grading.core.attention import attention

    variant = Variant.objects.get(
        student__username=username,
        exercise_version__exercise__slug="attention-weights-one-query",
        assignment_item__isnull=False,
    )
    spec = engine.spec_from_json(variant.exercise_version.spec)
    right = np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)
    params = variant.params
    raw = attention(params["Q"], params["K"], params["V"], scale=1.0).weights[params["q"]]
    return variant.assignment_item_id, right.tolist(), raw.tolist()


def submit_weights(page, values: list[float], *, attempt: int) -> str:
    for column, value in enumerate(values):
        page.fill(f"#form-weights input[name='cell-0-{column}']", f"{value:.4f}")
    started = time.perf_counter()
    page.click("#form-weights button[type='submit']")
    page.wait_for_function(
        "attempt => { const r = document.querySelector(\"#result-weights [data-result='graded']\");"
        " return r && r.innerText.includes('attempt ' + attempt); }",
        arg=attempt,
        timeout=30_000,
    )
    elapsed = time.perf_counter() - started
    text = page.inner_text("#result-weights [data-result='graded']")
    return f"({elapsed * 1000:.0f} ms) " + " ".join(text.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--user", default="student1")
    parser.add_argument("--screenshots", default=str(PROJECT_DIR / "test-artifacts"))
    args = parser.parse_args()

    import django
    from playwright.sync_api import sync_playwright

    django.setup()
    Path(args.screenshots).mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{args.url}/login/")
        page.fill("#id_username", args.user)
        page.fill("#id_password", "attention-demo")
        page.click("button[type='submit']")
        page.wait_for_url(f"{args.url}/")
        page.click("text=Scaled dot-product attention")
        page.click("text=Attention weights and context vector for one query")
        item_id, right, unscaled = weights_for(args.user)
        print(f"opened {page.url} (item {item_id})")
        print("wrong (unscaled) answer ->", submit_weights(page, unscaled, attempt=1))
        print("right answer            ->", submit_weights(page, right, attempt=2))
        shot = Path(args.screenshots) / "smoke-demo-graded.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
