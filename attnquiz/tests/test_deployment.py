"""Production configuration: deploy checks pass, and the compose file runs real code."""

import importlib
import os
import secrets
import subprocess
import sys
from pathlib import Path

import yaml
from django.conf import settings

PROJECT_DIR = Path(__file__).resolve().parents[2]


def production_env(**overrides) -> dict:
    # Only what production would have: browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in-process.
    dropped = ("DEBUG", "DJANGO_SETTINGS_MODULE", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="attnquiz.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="attnquiz.example.org",
    )
    env.update(overrides)
    return env


def test_check_deploy_passes_with_no_warnings():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT_DIR, env=production_env(), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = production_env()
    del env["SECRET_KEY"]
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "Set the SECRET_KEY environment variable" in result.stderr


def compose() -> dict:
    return yaml.safe_load((PROJECT_DIR / "docker-compose.yml").read_text())


def test_compose_has_every_service_with_health_checks():
    services = compose()["services"]
    assert {"web", "worker", "beat", "redis", "postgres"} <= set(services)
    for name in ("web", "worker", "redis", "postgres"):
        assert services[name]["healthcheck"]["test"], name


def test_compose_commands_reference_real_modules():
    services = compose()["services"]
    web_target = services["web"]["command"][1]
    module_name, attribute = web_target.split(":")
    assert callable(getattr(importlib.import_module(module_name), attribute))
    for name in ("worker", "beat"):
        command = services[name]["command"]
        assert command[:3] == ["celery", "-A", "attnquiz"]
        assert importlib.import_module("attnquiz").celery_app.main == "attnquiz"
    worker_queue = services["worker"]["command"][services["worker"]["command"].index("-Q") + 1]
    assert worker_queue == settings.CELERY_TASK_DEFAULT_QUEUE
    beat_task = settings.CELERY_BEAT_SCHEDULE["requeue-stale-submissions"]["task"]
    module_name, task_name = beat_task.rsplit(".", 1)
    assert hasattr(importlib.import_module(module_name), task_name)
    setup = services["migrate"]["command"][-1]
    assert "manage.py migrate --noinput" in setup and "manage.py load_bank" in setup


def test_compose_app_services_get_database_and_redis_urls():
    app_env = compose()["services"]["web"]["environment"]
    assert app_env["DATABASE_URL"].startswith("postgres://")
    assert app_env["REDIS_URL"] == "redis://redis:6379/0"
    assert app_env["DEBUG"] == "0"


def test_web_health_check_asks_readiness_under_an_allowed_host(client, db, settings):
    test = compose()["services"]["web"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    assert "'http://127.0.0.1:8000/healthz/'" in test[3]
    assert "os.environ['ALLOWED_HOSTS'].split(',')[0]" in test[3]
    settings.ALLOWED_HOSTS = ["attnquiz.example.org"]
    response = client.get("/healthz/", headers={"Host": "attnquiz.example.org"})
    assert response.status_code == 200 and response.json()["checks"]["database"] == "ok"

