"""Exam-start spike: each virtual user is one student of the plan in ``$LOAD_PLAN``.

Run by ``manage.py load_exam`` (``make load``), which writes the plan and starts the
stack. Each user signs in, opens the assignment and its exercises, answers with think
time, and stops; when every student is done the run ends. What a student does is in
``exam_student.py`` (shared with the default test suite); this file only binds it to
locust: its HTTP session, its statistics (``submit→graded`` as a custom entry) and its
errors (a ``StudentFailed`` is a failed ``exam``).
"""

import itertools
import json
import os
import sys

import gevent
from locust import HttpUser, constant, events, task
from locust.exception import StopUser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exam_student import ExamStudent, StudentFailed  # noqa: E402

with open(os.environ["LOAD_PLAN"]) as plan_file:
    PLAN = json.load(plan_file)
STUDENTS = PLAN["students"]
_next_student = itertools.count()
_finished = itertools.count(1)


def record(name: str, milliseconds: float, exception: Exception | None = None) -> None:
    events.request.fire(
        request_type="EXAM", name=name, response_time=milliseconds, response_length=0,
        exception=exception, context={},
    )


class Student(HttpUser):
    wait_time = constant(0)

    def on_start(self):
        index = next(_next_student)
        if index >= len(STUDENTS):
            raise StopUser()
        self.student = STUDENTS[index]

    @task
    def take_the_exam(self):
        student = ExamStudent(
            self.client, self.student, password=PLAN["password"], think=tuple(PLAN["think"]),
            assignment_url=PLAN["assignment_url"], record=record, sleep=gevent.sleep,
            start_url=PLAN.get("start_url"),
            session_cookie=(PLAN["session_cookie"], self.student["session"]) if self.student.get("session") else None,
        )
        try:
            student.run()
        except StudentFailed as failure:
            record("exam", 0, failure)
        finally:
            if student.retries:
                record("503 retried", float(student.retries))
            if next(_finished) >= len(STUDENTS):  # the last student: end the run
                gevent.spawn_later(1, self.environment.runner.quit)
        raise StopUser()
