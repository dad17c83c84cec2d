"""The JSON Lines contract, directly and through the real management command."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from grading.core.jsonl import answer_stream

ROOT = Path(__file__).resolve().parents[2]
SYMBOLS = {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive"}
REQUESTS = [
    {"type": "numeric", "expected": "0.3875", "answer": "0.3875"},
    "this is not json",
    {"type": "symbolic", "expected": "sqrt(d_k)*sigma_q*sigma_k", "answer": "sqrt(d_k)", "options": {"symbols": SYMBOLS}},
    {"type": "no-such-type", "expected": 1, "answer": 1},
    {"type": "symbolic", "expected": "x", "answer": "__import__('os')", "options": {"symbols": {"x": "real"}}},
    [1, 2],
    {"type": "matrix", "expected": [1, 2], "answer": "[1, 2, 3]"},
    {"type": "choice", "expected": "A", "answer": "A", "options": {"choices": ["A", "B"]}},
]
EXPECTED = [
    (True, 1.0, None, False),
    (False, 0.0, None, True),
    (False, 0.0, "forgot_sigma", False),
    (False, 0.0, None, True),
    (False, 0.0, None, True),
    (False, 0.0, None, True),
    (False, 0.0, None, True),
    (True, 1.0, None, False),
]


def _lines() -> list[str]:
    return [item if isinstance(item, str) else json.dumps(item) for item in REQUESTS]


def _assert_records(records: list[dict]) -> None:
    assert len(records) == len(EXPECTED)
    for record, (correct, score, misconception, has_error) in zip(records, EXPECTED):
        assert set(record) == {"correct", "score", "feedback", "misconception", "error"}
        assert (record["correct"], record["score"], record["misconception"], record["error"] is not None) == (
            correct, score, misconception, has_error), record


def test_answer_stream_in_process():
    out = io.StringIO()
    assert answer_stream(_lines() + ["", "  "], out) == len(REQUESTS)
    _assert_records([json.loads(line) for line in out.getvalue().splitlines()])


def test_management_command_over_a_pipe():
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "attnquiz.test_settings"}
    completed = subprocess.run(
        [sys.executable, "manage.py", "check_answer"], input="\n".join(_lines()) + "\n", capture_output=True,
        text=True, cwd=ROOT, env=environment, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    _assert_records([json.loads(line) for line in completed.stdout.splitlines()])


def test_the_command_writes_valid_utf8_whatever_it_is_fed():
    lone_surrogate = '{"type": "choice", "expected": "A", "answer": "\\ud800", "options": {"choices": ["A", "B"]}}'
    raw_surrogate = json.dumps({"type": "free_text", "expected": "x", "answer": "ok"}).encode()
    fed = b"\n".join([lone_surrogate.encode(), b"\xff\xfe{not utf-8", raw_surrogate,
                      json.dumps({"type": "numeric", "expected": "0.3", "answer": "0.31", "options": {"atol": 0.01, "rtol": 0}}).encode()])
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "attnquiz.test_settings"}
    completed = subprocess.run([sys.executable, "manage.py", "check_answer"], input=fed + b"\n", capture_output=True,
                               cwd=ROOT, env=environment, timeout=60)
    assert completed.returncode == 0, completed.stderr
    text = completed.stdout.decode("utf-8")  # raises if the output is not valid UTF-8
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == 4
    assert records[0]["error"].endswith("is not one of the choices (A, B)")
    assert records[1]["error"].startswith("request is not valid JSON")
    assert (records[3]["correct"], records[3]["score"]) == (True, 1.0)


def test_a_raw_surrogate_in_feedback_is_replaced_in_the_stream(monkeypatch):
    from grading.core import jsonl

    monkeypatch.setattr(jsonl, "answer_line", lambda line: {"feedback": "bad \ud800 char"})
    out = io.StringIO()
    answer_stream(["{}"], out)
    assert out.getvalue() == '{"feedback": "bad \ufffd char"}\n'
    out.getvalue().encode("utf-8")
