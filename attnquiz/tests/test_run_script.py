"""scripts/run.py (`make run`): how it configures the server it starts."""

import importlib.util
import os
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
