"""A long-running process's start-up objects, kept out of the garbage collector's full sweeps.

A web or worker process imports Django, every app, NumPy and SymPy before its first
request: about 180,000 objects the cyclic collector tracks and never frees. CPython's
full (generation 2) collection walks all of them each time it runs, which in a web
process took 80–90 ms of CPU with the GIL held: a pause for every thread of that process,
recurring as requests fill the old generation. ``gc.freeze()`` moves the objects alive now
into a permanent generation the collector no longer walks (Python's documentation
recommends it for processes that load once and then serve); afterwards a full collection
took 14–20 ms and the collector's share of a page's CPU fell from 3.7–3.9 % to 2.5 %
(docs/perf/README.md). Objects created later are collected as before.

Called once a process has loaded what it keeps: by ``attnquiz.wsgi`` after the URLconf
and the tasks, and by each Celery pool process when it starts (``grading.tasks``), after
importing its checkers (SymPy) and before forking its warm checker processes, which then
inherit the frozen objects.
"""

from __future__ import annotations

import gc


def startup_objects_freeze() -> int:
    """Collect the start-up garbage once, then freeze what is left; returns how many
    objects are frozen now."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
