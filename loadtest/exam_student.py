"""One student through an exam start, as a browser would: no Django, no locust.

The locustfile drives many of these with locust's HTTP session; the default test suite
drives a few with a plain ``requests.Session`` against a live server, so the logic
cannot rot unnoticed. ``session`` only needs the ``requests`` API plus a ``name``
keyword (locust's ``HttpSession`` has both; ``LocalSession`` adds it to requests).

A plan (written by ``manage.py load_exam``) lists each student's login and answers::

    {"password": "...", "think": [30, 90],
     "students": [{"username": "...", "answers": [
         {"item": 12, "part": "weights", "answer": "[0.1, ...]", "kind": "right"}, ...]}]}

In the exam-start profile the plan also has ``"start_url"`` (the exam's Start form) and
each student a ``"session"`` (a session key: signed in before the exam opens): the
student skips the sign-in, opens the assignment page, presses Start, then goes on.

A 503 (the server refusing a request it cannot take now) is retried after its
Retry-After, a bounded number of times, as a browser's user would press reload: the
request is delayed, never dropped.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable

import requests

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_HEADER = re.compile(r'"X-CSRFToken": "([^"]+)"')
SUBMIT_ACTION = re.compile(r'action="(/grading/variants/\d+/parts/([\w-]+)/submit/)"')
PENDING = re.compile(r'hx-get="(/grading/submissions/\d+/)\?wait=1"')
MAX_POLLS = 40  # each poll waits up to the server's long poll (1.5 s): about a minute in all
MAX_RETRIES = 8  # 503 answers retried per request
LONGEST_RETRY_WAIT = 10.0  # seconds, whatever Retry-After says


class StudentFailed(Exception):
    """The site answered, but not as a student's browser expects."""


class LocalSession(requests.Session):
    """``requests.Session`` on one base URL, accepting (and ignoring) locust's ``name``."""

    def __init__(self, base_url: str):
        super().__init__()
        self.base_url = base_url.rstrip("/")

    def request(self, method, url, *args, name=None, **kwargs):
        kwargs.setdefault("timeout", 60)
        return super().request(method, self.base_url + url, *args, **kwargs)


def answer_kinds(student_index: int) -> tuple[str, str]:
    """The kinds of a student's two answers (numeric weights, then symbolic). Over every
    50 students (100 answers): one hostile symbolic answer (1 %), and five students wrong
    on both parts (10 %)."""
    if student_index % 50 == 25:
        return ("right", "hostile")
    if student_index % 10 == 3:
        return ("wrong", "wrong")
    return ("right", "right")


class ExamStudent:
    """Log in, open the assignment and its exercises, then answer with think time.

    ``record(name, milliseconds)`` receives submit→graded as the student saw it; any
    unexpected answer from the site raises ``StudentFailed``.
    """

    def __init__(self, session, student: dict, *, password: str, think: tuple[float, float],
                 assignment_url: str, record: Callable[[str, float], None] = lambda name, ms: None,
                 sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None,
                 start_url: str | None = None, session_cookie: tuple[str, str] | None = None):
        self.session = session
        self.start_url = start_url
        self.session_cookie = session_cookie
        self.retries = 0
        self.student = student
        self.password = password
        self.think = think
        self.assignment_url = assignment_url
        self.record = record
        self.sleep = sleep
        self.rng = rng or random.Random(student["username"])
        self.csrf = ""
        self.forms: dict[tuple[int, str], str] = {}
        self.outcomes: list[tuple[str, str]] = []  # (kind, "graded" | "could_not_grade")

    def run(self) -> None:
        if self.session_cookie:
            self.session.cookies.set(*self.session_cookie)  # signed in before the exam opened
        else:
            self.log_in()
        if self.start_url:
            self.start_exam()
        self.open_assignment()
        for answer in self.student["answers"]:
            self.sleep(self.rng.uniform(*self.think))
            # The server closed the idle keep-alive connection meanwhile (gunicorn: after 2 s);
            # a browser opens a new one, rather than POST on a socket about to be reset.
            self.session.close()
            self.submit(answer)

    # --- steps ---------------------------------------------------------------------------

    def request(self, method: str, path: str, name: str, **kwargs) -> requests.Response:
        """The request, sent again after each 503's Retry-After (bounded)."""
        for _ in range(MAX_RETRIES + 1):
            response = self.session.request(method, path, name=name, allow_redirects=False, **kwargs)
            if response.status_code != 503:
                return response
            self.retries += 1
            try:
                wait = float(response.headers.get("Retry-After", "1"))
            except ValueError:
                wait = 1.0
            self.sleep(min(max(wait, 0.5), LONGEST_RETRY_WAIT) * self.rng.uniform(1.0, 1.5))
        return response

    def get(self, path: str, name: str, **kwargs) -> requests.Response:
        response = self.request("GET", path, name, **kwargs)
        if response.status_code != 200:
            raise StudentFailed(f"GET {name} answered {response.status_code}")
        return response

    def start_exam(self) -> None:
        """Open the assignment page, press Start: it answers with a redirect back to it."""
        page = self.get(self.assignment_url, "assignment page")
        token = _find(CSRF_FIELD, page.text, "the Start form's CSRF token")
        response = self.request("POST", self.start_url, "start", data={"csrfmiddlewaretoken": token})
        if response.status_code != 302:
            raise StudentFailed(f"start answered {response.status_code}, not a redirect")

    def log_in(self) -> None:
        page = self.get("/login/", "login page")
        token = _find(CSRF_FIELD, page.text, "the login form's CSRF token")
        response = self.request(
            "POST", "/login/", "log in",
            data={"username": self.student["username"], "password": self.password,
                  "csrfmiddlewaretoken": token},
        )
        if response.status_code != 302:
            raise StudentFailed(f"log in answered {response.status_code}, not a redirect")
        self.get("/", "dashboard")

    def open_assignment(self) -> None:
        self.get(self.assignment_url, "assignment page")
        for item in sorted({answer["item"] for answer in self.student["answers"]}):
            page = self.get(f"/exercises/{item}/", "exercise page").text
            self.csrf = _find(CSRF_HEADER, page, "the page's CSRF token")
            for action, part in SUBMIT_ACTION.findall(page):
                self.forms[(item, part)] = action

    def submit(self, answer: dict) -> None:
        action = self.forms.get((answer["item"], answer["part"]))
        if action is None:
            raise StudentFailed(f"exercise {answer['item']} has no form for part {answer['part']}")
        started = time.perf_counter()
        response = self.request(
            "POST", action, "submit", data={"answer": answer["answer"]},
            headers={"HX-Request": "true", "X-CSRFToken": self.csrf},
        )
        if response.status_code != 200:
            raise StudentFailed(f"submit answered {response.status_code}: {response.text[:200]}")
        html = response.text
        for _ in range(MAX_POLLS):
            if 'data-result="graded"' in html:
                break
            pending = _find(PENDING, html, "a grade or a pending marker")
            html = self.get(pending + "?wait=1", "result poll", headers={"HX-Request": "true"}).text
        else:
            raise StudentFailed(f"answer to {answer['part']} not graded after {MAX_POLLS} polls")
        self.record("submit→graded", 1000 * (time.perf_counter() - started))
        status = "could_not_grade" if "status-could_not_grade" in html else "graded"
        self.outcomes.append((answer["kind"], status))


def _find(pattern: re.Pattern, text: str, what: str) -> str:
    match = pattern.search(text)
    if match is None:
        raise StudentFailed(f"no {what} in the page")
    return match.group(1)
