"""Two web nodes behind nginx and two worker nodes: nothing depends on which one serves.

``make scale-test`` runs this (it installs Debian's nginx when missing); the default suite
skips it unless ATTNQUIZ_SCALE_TEST=1, since it starts nine processes. Two gunicorn
instances on their own ports share one PostgreSQL and one Redis behind an nginx
round-robin upstream, and two Celery workers with their own node names consume the same
queues. Each check goes through nginx, whose ``X-Served-By`` header names the node, and
asserts that both nodes served: a session, the answer throttle, the sign-in lockout, an
exam's one-session binding and the result long poll hold whichever node answers.
"""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import tempfile
import threading
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.urls import reverse

from authoring.tests.factories import (
    PASSWORD, assignment_create, people_create, product_yaml, published_version,
)
from courses.models import SessionPolicy
from grading.harness import CeleryWorker, Gunicorn, RedisServer, free_port, stack_env, wait_until
from grading.models import Submission, SubmissionStatus

from grading.tests.conftest import worker_database_url

pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("pipeline"),
    pytest.mark.skipif(os.environ.get("ATTNQUIZ_SCALE_TEST") != "1", reason="make scale-test runs it"),
]

NGINX_CONF = """
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream attnquiz_web {{
        server 127.0.0.1:{port_a} max_fails=0;
        server 127.0.0.1:{port_b} max_fails=0;
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://attnquiz_web;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_read_timeout 30s;
            add_header X-Served-By $upstream_addr always;
        }}
    }}
}}
"""


class Nginx:
    """Debian's nginx in the foreground, round-robin over two local web nodes."""

    def __init__(self, *, port_a: int, port_b: int):
        self.port = free_port()
        self.prefix = tempfile.mkdtemp(prefix="attnquiz-nginx-")
        self.conf = Path(self.prefix) / "nginx.conf"
        self.conf.write_text(NGINX_CONF.format(prefix=self.prefix, port=self.port, port_a=port_a, port_b=port_b))
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen(
            [binary, "-p", self.prefix, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_until(self._answers, timeout=10, what="nginx to answer")

    def _answers(self) -> bool:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            connection.request("GET", "/healthz/live/")
            return connection.getresponse().status == 200
        except OSError:
            return False

    def cleanup(self) -> None:
        CeleryWorker.stop(self)
        shutil.rmtree(self.prefix, ignore_errors=True)

    kill = CeleryWorker.kill


class Browser:
    """Cookies and the CSRF token of one browser, talking only to nginx."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}
        self.served_by: list[str] = []

    def request(self, method: str, path: str, form: dict | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
                "Referer": f"http://127.0.0.1:{self.port}/", **(headers or {})}
        body = None
        if form is not None:
            body = urlencode({**form, "csrfmiddlewaretoken": self.cookies.get(settings.CSRF_COOKIE_NAME, "")})
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        text = response.read().decode()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel["max-age"] == "0":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        self.served_by.append(response.headers.get("X-Served-By", ""))
        connection.close()
        return response.status, text

    def sign_in(self, username: str, password: str = PASSWORD) -> int:
        if settings.CSRF_COOKIE_NAME not in self.cookies:
            self.request("GET", reverse("login"))
        status, _ = self.request("POST", reverse("login"), {"username": username, "password": password})
        return status


@pytest.fixture
def cluster(transactional_db):
    database_url = worker_database_url()
    redis = RedisServer()
    redis.start()
    env = stack_env(
        database_url=database_url, redis_url=redis.url, secret_key=settings.SECRET_KEY,
        variant_seed_secret=settings.VARIANT_SEED_SECRET,
    )
    env.update(SUBMIT_RATE_BURST="3", SUBMIT_RATE_PER_SECOND="0.01", LOGIN_FAILURE_LIMIT="3",
               GRADING_LONG_POLL_SECONDS="0.05")
    webs = [Gunicorn(env=env, workers=1, threads=4) for _ in range(2)]
    workers = [CeleryWorker(broker_url=redis.url, database_url=database_url) for _ in range(2)]
    for worker in workers:
        worker.env.update(env)
    proxy = Nginx(port_a=webs[0].port, port_b=webs[1].port)
    try:
        starting = [threading.Thread(target=web.start) for web in webs]
        for thread in starting:
            thread.start()
        for name, worker in zip(("node-a", "node-b"), workers):
            worker.start(name=f"{name}@%h")
        for thread in starting:
            thread.join()
        proxy.start()
        yield proxy, webs, workers
    finally:
        proxy.cleanup()
        stopping = [threading.Thread(target=process.stop) for process in (*webs, *workers)]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()
        redis.cleanup()


def nodes(browser: Browser) -> set[str]:
    return {address for address in browser.served_by if address}


def test_two_web_nodes_and_two_workers_behind_nginx(cluster):
    proxy, webs, workers = cluster
    people = people_create()
    exam = assignment_create(people.course, [published_version(source=product_yaml())], slug="exam1")
    item = exam.items.get()
    exercise = reverse("exercise", args=[item.pk])
    both = {f"127.0.0.1:{web.port}" for web in webs}

    # A session made on one node is honoured by the other.
    sam = Browser(proxy.port)
    assert sam.sign_in("sam") == 302
    sam.served_by.clear()
    assert [sam.request("GET", reverse("dashboard"))[0] for _ in range(4)] == [200] * 4
    assert nodes(sam) == both

    # The answer throttle is one bucket for both nodes: a burst of 3, then refused.
    sam.served_by.clear()
    statuses = [
        sam.request("POST", reverse("submit", args=[variant_id(item, "sam"), "product"]), {"answer": str(n)},
                    headers={"HX-Request": "true"})[0]
        for n in range(5)
    ]
    assert statuses == [200, 200, 200, 429, 429]
    assert nodes(sam) == both
    stored = Submission.objects.filter(student__username="sam")
    assert stored.count() == 3

    # Every answer is graded, by one worker or the other; the long poll sees it on either node.
    wait_until(lambda: not stored.exclude(status=SubmissionStatus.GRADED).exists(), timeout=30,
               what="sam's answers to be graded")
    sam.served_by.clear()
    for submission in stored:
        status, html = sam.request("GET", reverse("submission", args=[submission.pk]) + "?wait=1",
                                   headers={"HX-Request": "true"})
        assert status == 200 and 'data-result="graded"' in html
    assert nodes(sam) == both

    # One browser session per exam attempt, whichever node the second browser reaches.
    exam.session_policy = SessionPolicy.REFUSE_SECOND
    exam.save()
    first, second = Browser(proxy.port), Browser(proxy.port)
    assert first.sign_in("sue") == 302 and second.sign_in("sue") == 302
    assert first.request("GET", exercise)[0] == 200
    second.served_by.clear()
    assert [second.request("GET", exercise)[0] for _ in range(4)] == [403] * 4
    assert nodes(second) == both
    assert [first.request("GET", exercise)[0] for _ in range(2)] == [200] * 2

    # The sign-in lockout counts failures from every node: the third, wherever it lands, locks.
    intruder = Browser(proxy.port)
    assert [intruder.sign_in("sam", "wrong") for _ in range(3)] == [200, 200, 429]
    intruder.served_by.clear()
    assert [intruder.sign_in("sam") for _ in range(2)] == [429, 429]  # right password, locked
    assert nodes(intruder) == both


def variant_id(item, username: str) -> int:
    from django.contrib.auth import get_user_model

    from exercises.services import variant_get_or_create_for_item

    user = get_user_model().objects.get(username=username)
    return variant_get_or_create_for_item(item=item, student=user).pk
