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
