"""The load test's pieces, run small in the default suite so they cannot rot unnoticed:
the plan ``load_exam`` builds, and the virtual student of the locustfile (its
``ExamStudent``, driven by plain ``requests``) against a live server."""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError

from grading.harness import children_cpu_seconds, machine_busy_seconds, reference_loop_ms, sessions_cpu_seconds
from grading.management.commands.load_exam import (
    SYMBOLIC_ANSWERS, MachineUse, cores_busy_line, http_request_count, load_course_build, machine_use_lines,
    outcome_problems, run_header_line, web_shape,
)
from grading.models import Submission, SubmissionStatus
from loadtest.exam_student import ExamStudent, LocalSession, StudentFailed, answer_kinds


def test_answer_mix_is_one_percent_hostile_and_ten_percent_wrong():
    kinds = [kind for index in range(2000) for kind in answer_kinds(index)]
    assert len(kinds) == 4000
    assert (kinds.count("hostile"), kinds.count("wrong"), kinds.count("right")) == (40, 400, 3560)
    assert answer_kinds(25) == ("right", "hostile")  # hostile answers go to the symbolic part
    assert answer_kinds(3) == ("wrong", "wrong")
    assert answer_kinds(0) == ("right", "right")


class RecordingSession:
    """A session that answers every request 200 and notes (method, path, name)."""

    def __init__(self):
        self.sent = []

    def request(self, method, path, *, name, **kwargs):
        self.sent.append((method, path, name))
        return type("Response", (), {"status_code": 200, "text": "", "headers": {}})()

    def close(self):
        pass


def test_a_thinking_student_polls_the_deadline_as_the_open_exam_page_does():
    import random

    session, slept = RecordingSession(), []
    student = ExamStudent(
        session, {"username": "s", "answers": []}, password="", think=(0, 0), assignment_url="/a/",
        sleep=slept.append, rng=random.Random(4),
    )
    student.think_for(10.0)  # no clock on the page: no polls
    assert (session.sent, slept) == ([], [10.0])
    student.deadline_url, student.poll_seconds, student.next_deadline_poll = "/d/", 30.0, 30.0
    slept.clear()
    student.think_for(100.0)
    student.think_for(20.0)  # the page's timer runs on across answers
    # Every 30 to 36 s, 120 s of thinking in all.
    assert [name for _, _, name in session.sent] == ["deadline poll"] * 3
    assert student.deadline_polls == 3
    assert abs(sum(slept) - 120.0) < 1e-9
    assert slept[0] == 30.0 and all(30.0 <= gap <= 36.0 for gap in slept[1:3])


@pytest.fixture
def plain_http(settings):
    """Cookies over plain HTTP, as the load stack serves them (attnquiz.load_settings)."""
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False


@pytest.mark.django_db(transaction=True)
def test_virtual_students_sign_in_answer_and_see_every_kind_finish(live_server, plain_http, settings):
    settings.GRADING_MODE = "inline"
    assignment, plan = load_course_build(students=26, password="load-pass-1", run="t1")
    assert plan["assignment_url"] == f"/courses/load-exam/assignments/{assignment.slug}/"
    chosen = [plan["students"][index] for index in (0, 3, 25)]  # right, wrong, hostile
    assert [answer["answer"] for answer in chosen[2]["answers"]][1] == SYMBOLIC_ANSWERS["hostile"]
    timings = []
    outcomes = []
    for student in chosen:
        virtual = ExamStudent(
            LocalSession(live_server.url), student, password=plan["password"], think=(30, 90),
            assignment_url=plan["assignment_url"], record=lambda name, ms: timings.append(name),
            sleep=lambda seconds: None,
        )
        virtual.run()
        outcomes += virtual.outcomes
    assert outcomes == [
        ("right", "graded"), ("right", "graded"),
        ("wrong", "graded"), ("wrong", "graded"),
        ("right", "graded"), ("hostile", "could_not_grade"),
    ]
    assert timings == ["submit→graded"] * 6
    statuses = sorted(
        Submission.objects.filter(variant__assignment_item__assignment=assignment).values_list(
            "student__username", "part", "status", "correct"
        )
    )
    assert statuses == [
        ("load-t1-00000", "general_variance", SubmissionStatus.GRADED, True),
        ("load-t1-00000", "weights", SubmissionStatus.GRADED, True),
        ("load-t1-00003", "general_variance", SubmissionStatus.GRADED, False),
        ("load-t1-00003", "weights", SubmissionStatus.GRADED, False),
        ("load-t1-00025", "general_variance", SubmissionStatus.COULD_NOT_GRADE, None),
        ("load-t1-00025", "weights", SubmissionStatus.GRADED, True),
    ]
    # The run's checks see these three as done, and the other 23 students as missing.
    chosen_plan = {**plan, "students": chosen}
    assert outcome_problems(assignment=assignment, plan=chosen_plan) == []
    assert outcome_problems(assignment=assignment, plan=plan) == ["46 planned answers were never stored"]


@pytest.mark.django_db(transaction=True)
def test_a_wrong_password_is_a_failed_student_not_a_hang(live_server, plain_http):
    _, plan = load_course_build(students=1, password="load-pass-2", run="t2")
    virtual = ExamStudent(
        LocalSession(live_server.url), plan["students"][0], password="not-it", think=(0, 0),
        assignment_url=plan["assignment_url"], sleep=lambda seconds: None,
    )
    with pytest.raises(StudentFailed, match="log in answered 200, not a redirect"):
        virtual.run()


@pytest.mark.django_db(transaction=True)
def test_exam_start_students_signed_in_before_press_start_then_answer(live_server, plain_http, settings):
    from exams.models import AssignmentAttempt

    settings.GRADING_MODE = "inline"
    assignment, plan = load_course_build(students=2, password="load-pass-3", run="t3", exam=True)
    assert plan["start_url"] == f"/exam/load-exam/a/{assignment.slug}/start/"
    student = plan["students"][0]
    virtual = ExamStudent(
        LocalSession(live_server.url), student, password="never-typed", think=(0, 0),
        assignment_url=plan["assignment_url"], start_url=plan["start_url"],
        session_cookie=(plan["session_cookie"], student["session"]), sleep=lambda seconds: None,
    )
    virtual.run()
    assert virtual.outcomes == [("right", "graded"), ("right", "graded")]
    assert list(AssignmentAttempt.objects.filter(assignment=assignment).values_list("student__username", flat=True)) == [
        student["username"]
    ]


@pytest.mark.django_db(transaction=True)
def test_first_views_make_the_variants_whose_answers_the_plan_holds(live_server, plain_http, settings):
    """``--variants first-view`` and ``prepared``: no variant exists before the run, the
    plan's right answers are those of the variants the pages then make."""
    from exercises.models import Variant

    settings.GRADING_MODE = "inline"
    assignment, plan = load_course_build(students=1, password="load-pass-4", run="t4", exam=True,
                                         variants_stored=False)
    assert not Variant.objects.filter(assignment_item__assignment=assignment).exists()
    student = plan["students"][0]
    virtual = ExamStudent(
        LocalSession(live_server.url), student, password="never-typed", think=(0, 0),
        assignment_url=plan["assignment_url"], start_url=plan["start_url"],
        session_cookie=(plan["session_cookie"], student["session"]), sleep=lambda seconds: None,
    )
    virtual.run()
    assert virtual.outcomes == [("right", "graded"), ("right", "graded")]
    assert Variant.objects.filter(assignment_item__assignment=assignment).count() == 2


def test_a_503_is_retried_after_its_retry_after_not_dropped():
    import random

    import requests

    def reply(status: int, retry_after: str | None = None) -> requests.Response:
        response = requests.Response()
        response.status_code = status
        if retry_after is not None:
            response.headers["Retry-After"] = retry_after
        return response

    class Busy:
        def __init__(self):
            self.replies = [reply(503, "2"), reply(503, "soon"), reply(200)]
            self.sent = 0

        def request(self, method, path, name=None, **kwargs):
            self.sent += 1
            return self.replies.pop(0)

    slept = []
    virtual = ExamStudent(
        Busy(), {"username": "s", "answers": []}, password="", think=(0, 0), assignment_url="/a/",
        sleep=slept.append, rng=random.Random(1),
    )
    assert virtual.get("/a/", "assignment page").status_code == 200
    assert (virtual.session.sent, virtual.retries, len(slept)) == (3, 2, 2)
    assert 2.0 <= slept[0] <= 3.0 and 1.0 <= slept[1] <= 1.5  # Retry-After, and 1 s when unreadable


class Scripted:
    """A session that answers from a script: a status, or an exception to raise."""

    def __init__(self, script):
        self.script = list(script)
        self.sent: list[dict] = []

    def request(self, method, path, name=None, **kwargs):
        import requests

        self.sent.append({"method": method, "path": path, **kwargs})
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        response = requests.Response()
        response.status_code, response._content = step, b'<p data-result="graded">'
        return response

    def close(self):
        pass


def scripted_student(script):
    import random

    slept = []
    virtual = ExamStudent(
        Scripted(script), {"username": "s", "answers": []}, password="", think=(0, 0), assignment_url="/a/",
        sleep=slept.append, rng=random.Random(1),
    )
    return virtual, slept


def test_no_answer_is_retried_with_a_growing_backoff():
    import requests

    virtual, slept = scripted_student([
        requests.ConnectionError("reset"), requests.Timeout("slow"), 0, 429, 200,  # 0: locust's "no answer"
    ])
    assert virtual.get("/a/", "assignment page").status_code == 200
    assert virtual.retries == 4
    assert 0.5 <= slept[0] <= 0.75 and 1.0 <= slept[1] <= 1.5 and 2.0 <= slept[2] <= 3.0  # 0.5 s, doubling
    assert 1.0 <= slept[3] <= 1.5  # the 429's missing Retry-After reads as 1 s
    assert all(sent["timeout"] == 60.0 for sent in virtual.session.sent)


def test_retries_are_bounded_in_number_and_then_the_student_fails():
    import requests

    from loadtest.exam_student import MAX_RETRIES, MAX_RETRY_SECONDS

    virtual, slept = scripted_student([requests.ConnectionError("refused")] * (MAX_RETRIES + 1))
    with pytest.raises(StudentFailed, match=r"no answer after \d+ retries \(120 s\)"):
        virtual.get("/a/", "assignment page")
    # The growing backoff (0.5 s doubling, at most 10 s × jitter) reaches the time bound first.
    assert 1 < len(virtual.session.sent) <= MAX_RETRIES + 1
    assert sum(slept) == pytest.approx(MAX_RETRY_SECONDS)


def test_a_503_after_the_last_retry_is_returned_not_retried_forever():
    from loadtest.exam_student import MAX_RETRIES

    virtual, slept = scripted_student([503] * (MAX_RETRIES + 1))
    with pytest.raises(StudentFailed, match="answered 503"):
        virtual.get("/a/", "assignment page")
    assert len(virtual.session.sent) == MAX_RETRIES + 1
    assert max(slept) <= 15.0  # each wait at most LONGEST_RETRY_WAIT × 1.5


def test_a_retried_answer_carries_the_same_key_each_time_and_a_new_answer_a_new_one():
    import requests

    virtual, _ = scripted_student([requests.ConnectionError("reset after the commit"), 200, 200])
    virtual.forms = {(1, "weights"): "/grading/variants/9/parts/weights/submit/"}
    virtual.submit({"item": 1, "part": "weights", "answer": "[1]", "kind": "right"})
    virtual.submit({"item": 1, "part": "weights", "answer": "[1]", "kind": "right"})
    keys = [sent["headers"]["Idempotency-Key"] for sent in virtual.session.sent]
    assert keys[0] == keys[1] != keys[2]
    assert len(keys[0]) >= 16
    assert virtual.stored == 2


def test_a_run_counts_its_http_requests_without_locusts_own_records_or_the_total():
    stats = {
        "assignment page": {"Type": "GET", "Request Count": "2000"},
        "start": {"Type": "POST", "Request Count": "1000"},
        "submit": {"Type": "POST", "Request Count": "1990"},
        "submit→graded": {"Type": "EXAM", "Request Count": "1990"},
        "Aggregated": {"Type": "", "Request Count": "6980"},
    }
    assert http_request_count(stats) == 4990
    assert http_request_count({}) == 0


def test_a_runs_machine_use_names_each_group_and_divides_by_requests_and_answers(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = MachineUse(
        spent={"gunicorn": 60.0, "worker grading": 15.5, "postgresql": 24.5}, seconds=125.0, speed_ms=(101.4, 98.6)
    )
    assert machine_use_lines(machine, requests=8000, answers=2000) == [
        "CPU during the run (s, /proc): gunicorn 60.0, worker grading 15.5, postgresql 24.5 = 100.0 in 125 s, "
        "0.80 of 2 cores on average; 12.5 ms per HTTP request (8000), 50.0 ms per answer (2000)",
        "machine speed: reference loop 101 ms CPU before the run, 99 after "
        "(grading.harness.reference_loop_ms; compare runs of similar speed)",
    ]


def test_the_load_generators_cpu_is_reported_apart_from_the_products(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    machine = MachineUse(spent={"gunicorn": 75.0, "redis": 25.0}, seconds=125.0, speed_ms=(50.0, 52.0), generator=40.0)
    lines = machine_use_lines(machine, requests=8000, answers=2000)
    assert lines[0].endswith("12.5 ms per HTTP request (8000), 50.0 ms per answer (2000)")
    assert lines[1] == (
        "load generator (locust), not counted above: 40.0 s CPU, 0.32 cores on average, 5.0 ms per HTTP request"
    )
    assert lines[2].startswith("machine speed: reference loop 50 ms CPU before the run, 52 after")


def test_an_ended_childs_cpu_is_counted_once_it_has_been_waited_for():
    import subprocess
    import sys

    before = children_cpu_seconds()
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True, timeout=30)
    assert 0.29 <= children_cpu_seconds() - before < 1.5  # the burn, startup included


def test_the_reference_loop_is_the_median_of_its_timed_repeats(monkeypatch):
    clock = iter([0.0, 0.120, 1.0, 1.100, 2.0, 2.300])  # repeats of 120, 100 and 300 ms
    monkeypatch.setattr("grading.harness.time.process_time", lambda: next(clock))
    assert reference_loop_ms(repeats=3, size=10) == pytest.approx(120.0)


def test_cores_busy_are_the_cpu_seconds_of_each_window_over_its_length():
    samples = [(0.0, 10.0, 100.0), (5.0, 12.0, 105.0), (10.0, 15.0, 110.0), (20.0, 35.0, 130.0), (25.0, 36.0, 131.0)]
    assert cores_busy_line(samples) == (
        "cores busy every 10 s (product processes but PostgreSQL | whole machine, load generator included): "
        "0.5|1.0 2.0|2.0"
    )


def test_a_window_in_which_the_products_processes_ended_shows_no_negative_cores():
    samples = [(0.0, 10.0, 100.0), (10.0, 25.0, 115.0), (20.0, 3.0, 118.0)]  # the stack stopped
    assert cores_busy_line(samples) == (
        "cores busy every 10 s (product processes but PostgreSQL | whole machine, load generator included): "
        "1.5|1.5 –|0.3"
    )


def test_a_sessions_cpu_counts_every_process_it_started_and_the_machine_counts_it_too():
    import subprocess
    import sys

    # The child says when it has burnt 0.5 s of CPU, then idles until it is killed. /proc
    # counts whole clock ticks, so the session's figure may be a tick short of the burn.
    burn = (
        "import sys, time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass\n"
        "print('burnt', flush=True)\ntime.sleep(60)"
    )
    busy_before = machine_busy_seconds()
    child = subprocess.Popen(
        [sys.executable, "-c", burn], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline() == "burnt\n"
        spent = sessions_cpu_seconds({child.pid})
        assert 0.45 <= spent < 1.5
        assert machine_busy_seconds() - busy_before >= 0.4  # the child's burn, at the least
        assert sessions_cpu_seconds({child.pid + 10_000_000}) == 0.0
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("text, shape", [("3x8", (3, 8)), ("6X4", (6, 4)), ("1x1", (1, 1)), ("32x64", (32, 64))])
def test_web_shape_reads_workers_by_threads(text, shape):
    assert web_shape(text) == shape


@pytest.mark.parametrize("text", ["3", "x8", "3x", "3x8x2", "-3x8", "0x8", "3x0", "33x8", "3x65", "threexeight", ""])
def test_web_shape_refuses_what_gunicorn_could_not_run(text):
    with pytest.raises(CommandError, match="--web takes"):
        web_shape(text)


def test_the_report_names_the_spike_and_the_web_servers_shape():
    assert run_header_line(exam=True, students=1000, think=(10.0, 30.0), web=(6, 4), seconds=117.4, exit_code=0) == (
        "exam start (signed in before, all press Start within the spawn time): 1000 students, think 10–30 s, "
        "gunicorn 6x4, locust ran 117 s (exit 0)"
    )
    assert run_header_line(exam=False, students=200, think=(2.0, 5.5), web=(3, 8), seconds=60, exit_code=1) == (
        "sign-in spike: 200 students, think 2–5.5 s, gunicorn 3x8, locust ran 60 s (exit 1)"
    )
