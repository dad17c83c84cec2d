"""scripts/run.py (`make run`): how it configures the server it starts."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

RUN_PY = Path(__file__).resolve().parents[2] / "scripts" / "run.py"


@pytest.fixture
def run(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("attnquiz_run_script", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "DEV_SECRET_FILE", tmp_path / "var" / "dev-secret-key")
    for name in ("DEBUG", "SECRET_KEY", "EMAIL_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    return module


def test_serves_like_production_over_plain_http_with_a_kept_dev_key(run):
    env = run.serving_env()
    assert env["DEBUG"] == "0"
    assert (env["SECURE_SSL_REDIRECT"], env["SECURE_HSTS_SECONDS"]) == ("0", "0")
    assert (env["SESSION_COOKIE_SECURE"], env["CSRF_COOKIE_SECURE"]) == ("0", "0")
    assert env["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"
    assert len(env["SECRET_KEY"]) >= 50
    assert run.serving_env()["SECRET_KEY"] == env["SECRET_KEY"]  # the same key next time
    assert oct(run.DEV_SECRET_FILE.stat().st_mode & 0o777) == "0o600"


def test_debug_1_and_an_own_secret_key_are_left_alone(run, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "mine")
    assert run.serving_env()["SECRET_KEY"] == "mine"
    monkeypatch.setenv("DEBUG", "1")
    assert run.serving_env() == dict(os.environ)  # DEBUG=1: nothing relaxed or added
    assert not run.DEV_SECRET_FILE.exists()


def test_each_checkout_gets_a_redis_database_of_its_own(run, tmp_path):
    first, second = tmp_path / "a" / "attnquiz", tmp_path / "b" / "attnquiz"
    assert 1 <= run.checkout_redis_db(first) <= 15
    assert run.checkout_redis_db(first) == run.checkout_redis_db(first)  # stable
    assert run.default_redis_url(first) == f"redis://127.0.0.1:6379/{run.checkout_redis_db(first)}"
    assert {run.checkout_redis_db(tmp_path / str(n)) for n in range(40)} - set(range(1, 16)) == set()


def test_a_database_another_checkout_uses_is_announced(run, tmp_path, monkeypatch):
    store = {}

    class FakeRedis:
        @classmethod
        def from_url(cls, url, **kwargs):
            return cls()

        def get(self, key):
            return store.get(key)

        def set(self, key, value):
            store[key] = value.encode()

    import redis

    monkeypatch.setattr(redis, "Redis", FakeRedis)
    url = "redis://127.0.0.1:6379/5"
    assert run.redis_claimed_by(url, tmp_path / "one") is None
    assert run.redis_claimed_by(url, tmp_path / "one") is None  # its own claim
    other = run.redis_claimed_by(url, tmp_path / "two")
    assert other == str(tmp_path / "one")
    assert "also used by the checkout at" in run.shared_redis_warning(url, other)
def test_a_supervised_worker_that_exits_is_started_again(run, monkeypatch):
    monkeypatch.setattr(run.Supervised, "RESTART_SECONDS", 0.0)
    worker = run.Supervised([sys.executable, "-c", "pass", "-n", "grading@here"], env=dict(os.environ))
    first = worker.process
    first.wait(timeout=10)
    assert worker.restart_if_exited() is True
    assert worker.process is not first
    worker.process.wait(timeout=10)


def test_a_running_worker_is_left_alone(run):
    worker = run.Supervised(
        [sys.executable, "-c", "import time; time.sleep(5)", "-n", "grading@here"], env=dict(os.environ)
    )
    try:
        assert worker.restart_if_exited() is False
    finally:
        worker.process.kill()
        worker.process.wait(timeout=10)


def test_the_web_server_keeps_no_database_connection_past_its_request(run, monkeypatch):
    monkeypatch.setenv("CONN_MAX_AGE", "60")
    env = run.serving_env()
    server_env = run.web_server_env(env)
    assert server_env["CONN_MAX_AGE"] == "0"
    assert {k: v for k, v in server_env.items() if k != "CONN_MAX_AGE"} == {
        k: v for k, v in env.items() if k != "CONN_MAX_AGE"
    }
    assert env["CONN_MAX_AGE"] == "60"  # the workers' environment is left as it was


def test_make_run_starts_runserver_with_conn_max_age_0_and_the_workers_without(run, monkeypatch):
    started = []

    class FakePopen:
        def __init__(self, command, *, env, cwd, **kwargs):
            started.append((command, env))
            self.returncode = 0

        def poll(self):
            return 0  # exits at once: main() stops waiting and returns

        def wait(self, timeout=None):
            return 0

    def fake_run(command, *, env, cwd, **kwargs):
        started.append((command, env))
        return run.subprocess.CompletedProcess(command, 0, stdout="Demo course: ...", stderr="")

    monkeypatch.delenv("CONN_MAX_AGE", raising=False)
    monkeypatch.setattr(run.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(run.subprocess, "run", fake_run)
    monkeypatch.setattr(run, "redis_answers", lambda url: True)
    monkeypatch.setattr(run, "redis_claimed_by", lambda url: None)
    monkeypatch.setattr(run, "port_answers", lambda host, port: True)
    assert run.main() == 0
    by_program = {tuple(command[1:3]): env for command, env in started}
    assert by_program[("manage.py", "runserver")]["CONN_MAX_AGE"] == "0"
    workers = [env for command, env in started if command[1:4] == ["-m", "celery", "-A"] and "worker" in command]
    assert len(workers) == 3
    assert all("CONN_MAX_AGE" not in env for env in workers)  # the settings' 60 s: long-lived processes


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _connections_named(application_name: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [application_name])
        return cursor.fetchone()[0]


def _serve_and_count_connections(run, env: dict, application_name: str, requests: int) -> int:
    """Start runserver as `make run` does with ``env``, answer ``requests`` requests that each
    read the database (/healthz/), and count the server's connections still open after them."""
    import subprocess
    import time
    import urllib.request

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env, cwd=run.ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        assert run.wait_until(lambda: run.port_answers("127.0.0.1", str(port)),
                              stopping=lambda: server.poll() is not None)
        for _ in range(requests):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz/", timeout=10) as response:
                assert response.status == 200
        time.sleep(0.5)  # each request's thread has ended
        return _connections_named(application_name)
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.django_db
def test_runserver_as_make_run_starts_it_leaves_no_idle_connections(run, monkeypatch):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("counts connections in PostgreSQL's pg_stat_activity")
    db = connection.settings_dict
    monkeypatch.delenv("DJANGO_SETTINGS_MODULE")  # manage.py's own: attnquiz.settings
    monkeypatch.delenv("CONN_MAX_AGE", raising=False)

    def env_named(application_name: str) -> dict:
        database_url = (f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
                        f"{db['NAME']}?application_name={application_name}")
        env = dict(run.serving_env(), DATABASE_URL=database_url, REDIS_URL="", GRADING_MODE="inline")
        if db.get("PASSWORD"):
            env["PGPASSWORD"] = db["PASSWORD"]
        return env

    # The settings' default (60 s) on runserver: finished request threads leave their connections
    # open (most of them: 6 of 8 in one run; Python frees some with their thread). The count sees them.
    before = f"attnquiz-run-test-default-{os.getpid()}"
    assert _serve_and_count_connections(run, env_named(before), before, requests=12) > 0
    # As `make run` starts it: not one left after the requests.
    after = f"attnquiz-run-test-make-run-{os.getpid()}"
    assert _serve_and_count_connections(run, run.web_server_env(env_named(after)), after, requests=12) == 0
