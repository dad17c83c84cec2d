"""Exam-start spike: each virtual user is one student of the plan in ``$LOAD_PLAN``.

Run by ``manage.py load_exam`` (``make load``), which writes the plan and starts the
stack. Each user signs in, opens the assignment and its exercises, answers with think
time, and stops; when every student is done the run ends. What a student does is in
``exam_student.py`` (shared with the default test suite); this file only binds it to
locust: its HTTP session, its statistics (``submit→graded`` as a custom entry) and its
errors (a ``StudentFailed`` is a failed ``exam``). A response the student retries (503,
429, no answer) is counted apart, as ``retried: <status>``, not as a failed request; at the
end the answers planned, acknowledged and seen graded are written to ``$LOAD_COUNTS``.

The client is locust's ``FastHttpUser`` (geventhttpclient): the load generator shares the
machine with the stack it measures, and with python-requests it spent about twice the CPU
per request (2.1 against 1.0–1.2 ms at 1,000 students).
"""

import itertools
import json
import os
import sys

import gevent
from locust import FastHttpUser, constant, events, task
from locust.exception import StopUser
from requests.cookies import RequestsCookieJar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exam_student import REQUEST_TIMEOUT, RETRIED_STATUSES, ExamStudent, StudentFailed  # noqa: E402

with open(os.environ["LOAD_PLAN"]) as plan_file:
    PLAN = json.load(plan_file)
STUDENTS = PLAN["students"]
_next_student = itertools.count()
_finished = itertools.count(1)
COUNTS = {"planned": sum(len(student["answers"]) for student in STUDENTS), "acknowledged": 0,
          "graded": 0, "could_not_grade": 0, "students_failed": 0, "retries": 0}


class RetryAwareSession:
    """locust's fast HTTP session as ``ExamStudent`` uses it (the calls of a
    ``requests.Session``); a response it will retry is reported under
    ``retried: <status>`` and not as a failure of the request."""

    def __init__(self, client):
        self.client = client
        # A jar with ``set(name, value)``, as a requests session's, for the signed-in cookie.
        self.cookies = client.cookiejar = client.client.cookiejar = RequestsCookieJar()

    def request(self, method, url, *, name, timeout=None, **kwargs):
        # The timeout is the user's network_timeout (REQUEST_TIMEOUT), set once per client.
        with self.client.request(method, url, name=name, catch_response=True, **kwargs) as response:
            if response.status_code in RETRIED_STATUSES:
                response.request_meta["name"] = f"retried: {response.status_code or 'no answer'}"
                response.success()
        return response

    def close(self):
        """Drop the kept-alive connections: the next request opens a new one."""
        self.client.client.close()


@events.quitting.add_listener
def write_counts(environment, **kwargs):
    if os.environ.get("LOAD_COUNTS"):
        with open(os.environ["LOAD_COUNTS"], "w") as counts_file:
            json.dump(COUNTS, counts_file)
    print("answers: " + ", ".join(f"{key} {value}" for key, value in COUNTS.items()))


def record(name: str, milliseconds: float, exception: Exception | None = None) -> None:
    events.request.fire(
        request_type="EXAM", name=name, response_time=milliseconds, response_length=0,
        exception=exception, context={},
    )


class Student(FastHttpUser):
    wait_time = constant(0)
    network_timeout = connection_timeout = REQUEST_TIMEOUT

    def on_start(self):
        index = next(_next_student)
        if index >= len(STUDENTS):
            raise StopUser()
        self.student = STUDENTS[index]

    @task
    def take_the_exam(self):
        student = ExamStudent(
            RetryAwareSession(self.client), self.student, password=PLAN["password"], think=tuple(PLAN["think"]),
            assignment_url=PLAN["assignment_url"], record=record, sleep=gevent.sleep,
            start_url=PLAN.get("start_url"),
            session_cookie=(PLAN["session_cookie"], self.student["session"]) if self.student.get("session") else None,
        )
        try:
            student.run()
        except StudentFailed as failure:
            COUNTS["students_failed"] += 1
            record("exam", 0, failure)
        finally:
            COUNTS["acknowledged"] += student.stored
            COUNTS["retries"] += student.retries
            for _, status in student.outcomes:
                COUNTS["graded" if status == "graded" else "could_not_grade"] += 1
            if next(_finished) >= len(STUDENTS):  # the last student: end the run
                gevent.spawn_later(1, self.environment.runner.quit)
        raise StopUser()
