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
While a student thinks, their open exam page asks for their deadline as a browser's
does: every ``data-deadline-poll-seconds`` (plus up to a fifth), from the page's clock.

A request the server could not take is sent again, as a browser's user would press
reload: a 503 (refused while busy) or 429 after its Retry-After, no answer at all (a
refused or reset connection, a timeout; locust reports it as status 0) after an
exponential backoff with jitter; at most ``MAX_RETRIES`` times and ``MAX_RETRY_SECONDS``
in all per request. Each answer carries an ``Idempotency-Key`` of its own, the same on
each retry, so an answer whose response was lost is stored once. The request is
delayed, never dropped.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from collections.abc import Callable

import requests

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_HEADER = re.compile(r'"X-CSRFToken": "([^"]+)"')
SUBMIT_ACTION = re.compile(r'action="(/grading/variants/\d+/parts/([\w-]+)/submit/)"')
PENDING = re.compile(r'hx-get="(/grading/submissions/\d+/)\?wait=1"')
DEADLINE_POLL = re.compile(r'data-deadline-url="([^"]+)" data-deadline-poll-seconds="(\d+)"')
MAX_POLLS = 40  # each poll waits up to the server's long poll (1.5 s): about a minute in all
MAX_RETRIES = 30  # retries per request: a refused Start is tried again for about a minute, as a person would
MAX_RETRY_SECONDS = 120.0  # waiting between the retries of one request, in all
LONGEST_RETRY_WAIT = 10.0  # seconds, whatever Retry-After says
FIRST_BACKOFF = 0.5  # seconds before the first retry of a request that got no answer
REQUEST_TIMEOUT = 60.0  # seconds: a request unanswered by then is retried
NO_ANSWER = 0  # locust's status for a connection error or a timeout
RETRIED_STATUSES = frozenset({NO_ANSWER, 429, 503})


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
        self.stored = 0  # answers the server acknowledged
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
        self.deadline_url: str | None = None  # an open exam page's clock asks it
        self.poll_seconds = 0.0
        self.next_deadline_poll = 0.0  # seconds of thinking until the page's next poll
        self.deadline_polls = 0

    def run(self) -> None:
        if self.session_cookie:
            self.session.cookies.set(*self.session_cookie)  # signed in before the exam opened
        else:
            self.log_in()
        if self.start_url:
            self.start_exam()
        self.open_assignment()
        for answer in self.student["answers"]:
            self.think_for(self.rng.uniform(*self.think))
            # The server closed the idle keep-alive connection meanwhile (gunicorn: after 2 s);
            # a browser opens a new one, rather than POST on a socket about to be reset.
            self.session.close()
            self.submit(answer)

    # --- steps ---------------------------------------------------------------------------

    def request(self, method: str, path: str, name: str, **kwargs) -> requests.Response:
        """The request, sent again after a 503, a 429 or no answer (bounded: ``MAX_RETRIES``
        times, ``MAX_RETRY_SECONDS`` of waiting); the last answer, or StudentFailed if
        none came."""
        kwargs.setdefault("timeout", REQUEST_TIMEOUT)
        waited = 0.0
        for retry in range(MAX_RETRIES + 1):
            try:
                response = self.session.request(method, path, name=name, allow_redirects=False, **kwargs)
            except requests.RequestException:  # a plain requests session raises what locust reports as 0
                response = None
            status = NO_ANSWER if response is None else response.status_code
            if status not in RETRIED_STATUSES or retry == MAX_RETRIES or waited >= MAX_RETRY_SECONDS:
                break
            self.retries += 1
            wait = min(self.retry_wait(response, retry), MAX_RETRY_SECONDS - waited)
            self.sleep(wait)
            waited += wait
        if status == NO_ANSWER:
            raise StudentFailed(f"{method} {name}: no answer after {retry} retries ({waited:.0f} s)")
        return response

    def retry_wait(self, response, retry: int) -> float:
        """Seconds before the next try: the server's Retry-After if it sent one, else an
        exponential backoff; with jitter, so refused clients do not come back together."""
        wait = FIRST_BACKOFF * 2 ** retry
        if response is not None and response.status_code != NO_ANSWER:
            try:
                wait = float(response.headers.get("Retry-After", "1"))
            except ValueError:
                wait = 1.0
        return min(max(wait, FIRST_BACKOFF), LONGEST_RETRY_WAIT) * self.rng.uniform(1.0, 1.5)

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
            clock = DEADLINE_POLL.search(page)
            if clock is not None:  # a running exam: the page's clock polls its deadline
                self.deadline_url, self.poll_seconds = clock.group(1), float(clock.group(2))
                self.next_deadline_poll = self.poll_seconds * self.rng.uniform(1.0, 1.2)
            for action, part in SUBMIT_ACTION.findall(page):
                self.forms[(item, part)] = action

    def think_for(self, seconds: float) -> None:
        """Think for ``seconds``; meanwhile the open exam page asks for the deadline on its clock."""
        while self.deadline_url and seconds >= self.next_deadline_poll:
            self.sleep(self.next_deadline_poll)
            seconds -= self.next_deadline_poll
            self.session.close()  # the idle keep-alive connection is gone, as for the answers
            self.get(self.deadline_url, "deadline poll", headers={"Accept": "application/json"})
            self.deadline_polls += 1
            self.next_deadline_poll = self.poll_seconds * self.rng.uniform(1.0, 1.2)
        if self.deadline_url:
            self.next_deadline_poll -= seconds
        self.sleep(seconds)

    def submit(self, answer: dict) -> None:
        action = self.forms.get((answer["item"], answer["part"]))
        if action is None:
            raise StudentFailed(f"exercise {answer['item']} has no form for part {answer['part']}")
        started = time.perf_counter()
        response = self.request(
            "POST", action, "submit", data={"answer": answer["answer"]},
            # One key per answer, the same on each retry: stored once if a response is lost.
            headers={"HX-Request": "true", "X-CSRFToken": self.csrf, "Idempotency-Key": secrets.token_urlsafe(16)},
        )
        if response.status_code != 200:
            raise StudentFailed(f"submit answered {response.status_code}: {response.text[:200]}")
        self.stored += 1
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
