"""Long-running processes freeze what they loaded at start (attnquiz.startup_heap): a web
process once its URLconf and tasks are imported, a worker's pool process once its checkers
are, before it forks the warm checker that then inherits the frozen objects.

Each case runs in a fresh interpreter: freezing is for the life of a process, and the
test process's own collector is left as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

UNFROZEN_GARBAGE = """
import gc, weakref
from attnquiz.startup_heap import startup_objects_freeze

class Node:
    pass

kept = Node()
cycle = Node()
cycle.self = cycle
cycle_alive = weakref.ref(cycle)
del cycle
frozen = startup_objects_freeze()
print(cycle_alive() is None, frozen == gc.get_freeze_count(), gc.get_freeze_count() > 0,
      kept in gc.get_objects(), len(gc.get_objects()))
"""

WEB_PROCESS = """
import gc, sys
import attnquiz.wsgi
print(gc.get_freeze_count() > 100_000, "grading.views" in sys.modules, "exercises.views" in sys.modules,
      len(gc.get_objects()) < 1_000)
"""

WORKER_POOL_PROCESS = """
import django
django.setup()
import gc, sys
from grading.core import sandbox
from grading.tasks import warm_checker_pool

seen = {}
real_warm = sandbox.CheckerPool.warm

def warm(pool):
    seen["frozen before the fork"] = gc.get_freeze_count() > 100_000
    seen["checker imported before freezing"] = "grading.core.symbolic" in sys.modules
    real_warm(pool)

sandbox.CheckerPool.warm = warm
warm_checker_pool()
print(seen["frozen before the fork"], seen["checker imported before freezing"],
      sandbox.run_limited(gc.get_freeze_count) > 100_000)
"""


def run(code: str) -> str:
    env = {"DJANGO_SETTINGS_MODULE": "attnquiz.test_settings", "PATH": "/usr/bin:/bin",
           "REDIS_URL": "", "DATABASE_URL": "sqlite:///:memory:"}
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_freezing_collects_the_start_up_garbage_first_and_leaves_nothing_to_walk():
    # The cycle dropped before freezing is collected, not kept for ever; what is alive is
    # frozen, so the collector's generations hold only what the call itself made.
    collected, counted, frozen, kept_tracked, left = run(UNFROZEN_GARBAGE).split()
    assert (collected, counted, frozen, kept_tracked) == ("True", "True", "True", "False")
    assert int(left) < 50


def test_a_web_process_freezes_its_views_and_tasks_before_its_first_request():
    assert run(WEB_PROCESS) == "True True True True"


def test_a_worker_pool_process_freezes_after_importing_its_checkers_and_before_forking_them():
    assert run(WORKER_POOL_PROCESS) == "True True True"
