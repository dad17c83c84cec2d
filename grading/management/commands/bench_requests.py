"""CPU per exercise page and per submit, in this process: Django's handler, no HTTP server.

A signed-in student (one per request, each with a fresh variant and no attempt used)
opens the exercise page, then posts the right answer to its first part through the full
middleware stack, ``--requests`` times per round; the figure per round is the median
``time.process_time`` per request, and the command prints the median of ``--rounds``
rounds, the queries per request and the Python function calls of one request (counted
by cProfile, apart from the timed ones: a figure a busy machine does not move). Submit enqueues on a private Redis (nothing consumes
it) and does not wait for the grade (``GRADING_LONG_POLL_SECONDS`` = 0), so its figure is
the request's own work. Run on the load settings; wrap it in ``py-spy record`` to see
where the time goes. Benchmarks only.
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
from contextlib import nullcontext
import time
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.harness import RedisServer
from grading.models import Submission, SubmissionStatus

from .bench_profile import collapsed_top

from .bench_http import Command as BenchHttp


class Command(BenchHttp):
    calls: dict[str, int] = {}
    help = "Median in-process CPU (ms) per exercise page and per submit, and their query counts."

    def add_arguments(self, parser):
        parser.add_argument("--requests", type=int, default=100)
        parser.add_argument("--rounds", type=int, default=5)
        parser.add_argument("--top-of", help="only print the top-15 of the page and of submit from this "
                                             "py-spy raw file (recorded around an earlier run)")

    def handle(self, *args, requests, rounds, top_of=None, **options):
        if top_of:
            return self.print_top(Path(top_of))
        from attnquiz.celery import app

        broker = RedisServer()
        broker.start()
        previous = app.conf.broker_url
        app.conf.broker_url = broker.url
        settings.GRADING_MODE = "celery"
        settings.GRADING_LONG_POLL_SECONDS = 0
        try:
            item = self.bench_item()
            page_url = reverse("exercise", args=[item.pk])
            self.measure(page_url, self.prepared(item, 5), lambda student: ("GET", page_url, {}))  # warm up
            pages, submits, queries = [], [], {}
            for _ in range(rounds):
                students = self.prepared(item, requests)
                ms, queries["page"] = self.measure(page_url, students, lambda student: ("GET", page_url, {}))
                pages.append(ms)
                ms, queries["submit"] = self.measure(page_url, students, self.submit_request)
                submits.append(ms)
            # Nothing grades them: left queued, a later stack's sweeper would send them all again.
            Submission.objects.filter(student__username__startswith="bench-", status=SubmissionStatus.QUEUED).delete()
        finally:
            app.conf.broker_url = previous
            broker.cleanup()
        self.stdout.write(
            f"in-process CPU, median of {rounds} rounds of {requests} requests: "
            f"exercise page {statistics.median(pages):.2f} ms ({queries['page']} queries), "
            f"submit {statistics.median(submits):.2f} ms ({queries['submit']} queries); "
            f"rounds: pages {' '.join(f'{ms:.2f}' for ms in pages)}; submits {' '.join(f'{ms:.2f}' for ms in submits)}; "
            f"Python function calls (one request, cProfile): page {self.calls.get('GET')}, submit {self.calls.get('POST')}"
        )

    @staticmethod
    def submit_request(student):
        url = reverse("submit", args=[student["variant"].pk, "weights"])
        return "POST", url, {"answer": student["answer"]}

    @staticmethod
    def measure(page_url, students, request_of) -> tuple[float, int]:
        """Median CPU ms per request over the students after the first, and the queries
        of the first (counted apart: counting queries slows the cursor)."""
        timings = []
        queries = 0
        # One client, so one handler: a Client per request built the middleware each time,
        # and with collected static files WhiteNoise's start-up scan of them (~200,000
        # Python calls) was counted as part of every request.
        client = Client(HTTP_HX_REQUEST="true")
        for index, student in enumerate(students):
            client.cookies.clear()
            client.cookies[settings.SESSION_COOKIE_NAME] = student["session"]
            method, url, data = request_of(student)
            profile = cProfile.Profile() if index == 1 else None
            with CaptureQueriesContext(connection) if index == 0 else nullcontext() as captured:
                started = time.process_time()
                if profile:
                    profile.enable()
                response = client.get(url) if method == "GET" else client.post(url, data)
                if profile:
                    profile.disable()
                spent = 1000 * (time.process_time() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{method} {url} answered {response.status_code}")
            if index == 0:
                queries = len(captured)
            elif profile:
                # Python function calls: a count the machine's load does not move.
                Command.calls[method] = pstats.Stats(profile).total_calls
            else:
                timings.append(spent)
        return statistics.median(timings), queries

    def print_top(self, path: Path) -> None:
        for title, view in (("exercise page", "exercise_page"), ("submit", "submit_answer")):
            samples, rows = collapsed_top(path, within=view)
            self.stdout.write(f"\n{title} ({view}): {samples} samples; own % / total %, as py-spy top sorts")
            for name, own, total in rows:
                self.stdout.write(f"  {100 * own / max(samples, 1):5.1f} {100 * total / max(samples, 1):5.1f}  {name}")
