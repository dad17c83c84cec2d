"""A web process's threads find every task, from its first request on: Celery imports the
tasks modules lazily, and that first import is not safe for two threads at once."""

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

# 16 threads ask for the grading task at once in a fresh interpreter where no tasks module
# was imported yet; each prints what it got.
RACE = """
import threading, django
django.setup()
from attnquiz.enqueue import registered_task
barrier = threading.Barrier(16)
found = []
def ask():
    barrier.wait()
    try:
        found.append(registered_task("grading.tasks.grade_submission").name)
    except Exception as error:
        found.append(type(error).__name__)
threads = [threading.Thread(target=ask) for _ in range(16)]
[t.start() for t in threads]
[t.join() for t in threads]
print(sorted(set(found)))
"""

WSGI = """
import attnquiz.wsgi
from attnquiz.celery import app
print(sorted(n for n in app.tasks if n.startswith(("grading.", "mastery.", "review.", "exams."))))
"""


def run(code: str) -> str:
    env = {"DJANGO_SETTINGS_MODULE": "attnquiz.test_settings", "PATH": "/usr/bin:/bin",
           "REDIS_URL": "", "DATABASE_URL": "sqlite:///:memory:"}
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_sixteen_threads_asking_at_once_all_find_the_task():
    for _ in range(3):
        assert run(RACE) == "['grading.tasks.grade_submission']"


def test_a_web_process_knows_every_task_before_its_first_request():
    names = run(WSGI)
    for task in ("grading.tasks.grade_submission", "grading.tasks.run_followups",
                 "grading.tasks.requeue_stale_submissions"):
        assert f"'{task}'" in names


# After the web process's start, a publish's backend lookup scans no package metadata.
BACKEND = """
import attnquiz.wsgi
import celery.app.backends
from attnquiz.celery import app
def scanned(*args, **kwargs):
    raise AssertionError("scanned the entry points again")
celery.app.backends.load_extension_class_names = scanned
print(type(app.backend).__name__)
"""


def test_a_web_process_resolves_the_result_backend_before_its_first_request():
    assert run(BACKEND) == "DisabledBackend"
