"""End to end: a script with an API token submits an answer over HTTP to a live server and
reads the grade a real Celery worker stored (PostgreSQL, a private Redis, a worker process)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from api.tests.conftest import world_create
from grading.tests.conftest import broker, redis_server, start_worker  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]


def call(live_server, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        live_server.url + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_token_script_submits_and_reads_the_workers_grade(start_worker, live_server, settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}
    start_worker()
    world = world_create()
    token = world.tokens["student"]
    status, exercise = call(live_server, token, "GET", f"/api/v1/exercises/{world.item.pk}/")
    assert status == 200
    inputs = exercise["inputs"]
    parts = {part["key"]: part["submit_url"] for part in exercise["parts"]}

    status, wrong = call(live_server, token, "POST", parts["product"], {"answer": str(inputs["a"] * inputs["b"] + 1)})
    assert status == 202
    status, right = call(live_server, token, "POST", parts["product"], {"answer": str(inputs["a"] * inputs["b"])})
    assert status == 202

    results = {}
    deadline = time.monotonic() + 60
    for accepted in (wrong, right):
        while time.monotonic() < deadline:
            _, result = call(live_server, token, "GET", accepted["url"] + "?wait=5")
            if result["finished"]:
                results[accepted["id"]] = result
                break
    assert [(r["attempt"], r["status"], r["score"], r["correct"]) for r in results.values()] == [
        (1, "graded", 0.0, False), (2, "graded", 1.0, True),
    ]
    status, assignment = call(live_server, token, "GET", "/api/v1/courses/attn/assignments/week1/")
    assert assignment["exercises"][0]["solved_parts"] == 1
    status, again = call(live_server, token, "POST", parts["product"], {"answer": "1"})
    assert (status, again["detail"]) == (409, "You have already solved this part.")
