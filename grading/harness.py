"""Real services for integration tests and benchmarks: a private Redis server and workers.

Each test session gets its own ``redis-server`` on a free port, so a test may stop,
restart or flush it without touching anybody else's Redis, and worker subprocesses
that read the same test database as the test (which must be PostgreSQL).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, *, timeout: float, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def statistics_refresh() -> None:
    """ANALYZE, as autovacuum would have long before a real exam (a deployment runs it; this
    machine's PostgreSQL does not): the students were enrolled seconds ago, and with the
    planner's statistics of an empty table the role read walked every enrolment of the
    course (0.42 ms at 2,000 students, 1.3 ms at 14,000) instead of the one it needs."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def database_url(settings_dict: dict, *, vendor: str) -> str:
    """The URL a worker subprocess needs to reach the database this process uses."""
    if vendor == "sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    return (
        f"postgres://{settings_dict['USER'] or 'postgres'}@{settings_dict['HOST'] or '127.0.0.1'}:"
        f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
    )


class RedisServer:
    """A throw-away redis-server that keeps nothing on disk."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = tempfile.mkdtemp(prefix="attnquiz-redis-")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (scripts/services.sh installs it)")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.directory],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, timeout=10, what="redis-server to answer")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), 0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def flushall(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), 1) as s:
            s.sendall(b"FLUSHALL\r\n")
            assert s.recv(16).startswith(b"+OK")

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class CeleryWorker:
    """``celery worker`` as a real subprocess, grading against the test database."""

    running: list["CeleryWorker"] = []  # started and not yet stopped (for failure messages)

    @classmethod
    def running_log_tail(cls, lines: int = 60) -> str:
        """The last lines each running worker printed: what a test shows when it waited in vain."""
        return "\n".join("".join(worker.log[-lines:]) for worker in cls.running)

    def __init__(self, *, broker_url: str, database_url: str, extra_env: dict | None = None):
        self.env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="attnquiz.test_settings",
            DATABASE_URL=database_url,
            REDIS_URL=broker_url,
            CELERY_BROKER_URL=broker_url,
            GRADING_MODE="celery",
            CELERY_VISIBILITY_TIMEOUT="4",
            CELERY_UNACKED_RESTORE_INTERVAL="1",
            PYTHONUNBUFFERED="1",
            **(extra_env or {}),
        )
        self.process: subprocess.Popen | None = None
        self.log: list[str] = []

    def start(self, *, concurrency: int = 1, queues: str = "grading,practice,followups",
              lean: bool = True, name: str | None = None, nice: int = 0) -> None:
        """Start and wait until ready; by default one worker serves both grading queues and
        the grades' follow-ups.

        ``lean`` leaves out gossip, mingle and heartbeats (a faster start); without it the
        worker runs as production's do."""
        command = [
            sys.executable, "-m", "celery", "-A", "attnquiz", "worker",
            "--loglevel=INFO", f"--concurrency={concurrency}", "--pool=prefork", "-Q", queues,
            *(["--without-gossip", "--without-mingle", "--without-heartbeat"] if lean else []),
            "-n", name or f"test-{free_port()}@%h",
        ]
        if nice:
            command = ["nice", "-n", str(nice), *command]
        self.process = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        CeleryWorker.running.append(self)
        ready = threading.Event()
        threading.Thread(target=self._read_output, args=(ready,), daemon=True).start()
        if not ready.wait(timeout=60):
            self.kill()
            raise RuntimeError("celery worker did not become ready:\n" + "".join(self.log[-40:]))

    def _read_output(self, ready: threading.Event) -> None:
        for line in self.process.stdout:
            self.log.append(line)
            if " ready." in line:
                ready.set()

    def kill(self) -> None:
        """SIGKILL the whole worker (parent and pool children), as a crash would."""
        CeleryWorker._forget(self)
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def _forget(self) -> None:
        # Shared as stop/kill by other process wrappers (gunicorn, beat): only workers are listed.
        if self in CeleryWorker.running:
            CeleryWorker.running.remove(self)

    def stop(self) -> None:
        CeleryWorker._forget(self)
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


# Production's admission control (attnquiz.admission): a request that waited too long for a
# thread is answered 503 + Retry-After; the kernel holds up to --backlog connections not yet
# accepted, each worker at most --worker-connections accepted ones.
GUNICORN_ADMISSION = (
    "--worker-class", "attnquiz.gunicorn_worker.AdmissionThreadWorker",
    "--backlog", "2048", "--worker-connections", "1000",
)


class Gunicorn:
    """The production web server (gunicorn, gthread workers) on a free 127.0.0.1 port."""

    def __init__(self, *, env: dict, workers: int = 3, threads: int = 8):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, **env)
        self.workers, self.threads = workers, threads
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            sys.executable, "-m", "gunicorn", "attnquiz.wsgi:application",
            "--bind", f"127.0.0.1:{self.port}", "--workers", str(self.workers),
            "--threads", str(self.threads), "--timeout", "30", *GUNICORN_ADMISSION,
        ]
        self.process = subprocess.Popen(
            command, cwd=PROJECT_DIR, env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_until(self.answers, timeout=60, interval=0.2, what="gunicorn to answer")

    def answers(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(self.url + "/healthz/live/", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    stop = CeleryWorker.stop
    kill = CeleryWorker.kill


class CeleryBeat:
    """``celery beat`` as a subprocess: the periodic sweeper of a production-like stack."""

    def __init__(self, *, env: dict):
        self.env = dict(os.environ, **env)
        self.directory = tempfile.mkdtemp(prefix="attnquiz-beat-")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            sys.executable, "-m", "celery", "-A", "attnquiz", "beat", "--loglevel=WARNING",
            "--schedule", os.path.join(self.directory, "schedule"),
        ]
        self.process = subprocess.Popen(
            command, cwd=PROJECT_DIR, env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    stop = CeleryWorker.stop
    kill = CeleryWorker.kill


def stack_env(*, database_url: str, redis_url: str, secret_key: str, variant_seed_secret: str) -> dict:
    """The environment of a production-like process (web, worker, beat) on 127.0.0.1.

    The secrets must be the caller's when it signs sessions or draws variants itself."""
    return {
        "DJANGO_SETTINGS_MODULE": "attnquiz.load_settings",
        "DEBUG": "0",
        "SECRET_KEY": secret_key,
        "VARIANT_SEED_SECRET": variant_seed_secret,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "GRADING_MODE": "celery",
        "LOG_LEVEL": "WARNING",
    }


FOLLOWUP_NICENESS = 10


def queue_worker_start(worker: CeleryWorker, queue: str) -> None:
    """Start ``worker`` on ``queue`` as docker-compose runs it: the grading queue at
    concurrency 2, the others at 1, and the follow-ups' worker at a lower CPU priority
    (nice 10): its batches can wait a moment, a student waiting for a grade cannot."""
    from django.conf import settings

    worker.start(
        concurrency=2 if queue == settings.CELERY_TASK_DEFAULT_QUEUE else 1, queues=queue,
        nice=FOLLOWUP_NICENESS if queue == settings.FOLLOWUP_QUEUE else 0,
    )


def grade_queues() -> list[str]:
    """Every queue a grade's work may run on, from the settings: the grading and practice
    queues, every other ``*_QUEUE`` setting (review, follow-ups) and any queue named in
    the task routes or the beat schedule. A benchmark that starts a worker for each
    counts all the work a grade causes."""
    from django.conf import settings

    names = [settings.CELERY_TASK_DEFAULT_QUEUE]
    names += [
        getattr(settings, name) for name in dir(settings)
        if name.endswith("_QUEUE") and isinstance(getattr(settings, name), str)
    ]
    routes = getattr(settings, "CELERY_TASK_ROUTES", None) or {}
    if isinstance(routes, dict):
        names += [route.get("queue") for route in routes.values() if isinstance(route, dict)]
    for entry in getattr(settings, "CELERY_BEAT_SCHEDULE", {}).values():
        names.append((entry.get("options") or {}).get("queue"))
    return list(dict.fromkeys(name for name in names if name))


def _stat_fields(pid) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (None if the process is gone):
    [3] is the session id, [11] and [12] the user and system CPU ticks."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _live_processes():
    """(pid, stat fields) of every live process, in one pass over /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat_fields(entry)) is not None:
            yield int(entry), fields


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one live process (0 if it is gone), from /proc."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_pids(leader: int) -> list[int]:
    """Every live process in the session ``leader`` started (start_new_session=True):
    a gunicorn or celery master with its workers, pool children and sandboxes."""
    return [pid for pid, fields in _live_processes() if int(fields[3]) == leader]


def sessions_cpu_seconds(leaders: set[int]) -> float:
    """User + system CPU seconds of every live process in the sessions ``leaders`` started,
    in one pass over /proc (``session_pids`` per leader costs a pass each)."""
    ticks = sum(int(fields[11]) + int(fields[12]) for _, fields in _live_processes() if int(fields[3]) in leaders)
    return ticks / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's children that have ended and been waited
    for (a load generator run to its end by ``subprocess.run``)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds() -> float:
    """CPU seconds every core of this machine spent busy since boot (/proc/stat: all but
    idle and iowait), whoever spent them."""
    with open("/proc/stat") as handle:
        values = [int(value) for value in handle.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = values
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds spent by named groups of processes between ``start`` and ``stop``.

    ``groups`` maps a name to a callable returning the group's pids now; pids are read at
    both ends (a process that ends between them loses its last share, which only
    understates). Reaped children count through their parent's cutime/cstime in /proc,
    which this does not read: a sandbox child is a live pool member here."""

    def __init__(self, groups: dict):
        self.groups = groups
        self.before: dict[str, dict[int, float]] = {}
        self.spent: dict[str, float] = {}

    def _sample(self) -> dict[str, dict[int, float]]:
        return {name: {pid: process_cpu_seconds(pid) for pid in pids()} for name, pids in self.groups.items()}

    def start(self) -> None:
        self.before = self._sample()

    def stop(self) -> dict[str, float]:
        after = self._sample()
        self.spent = {
            name: sum(seconds - self.before[name].get(pid, 0.0) for pid, seconds in after[name].items())
            for name in self.groups
        }
        return self.spent


def stack_cpu_meter(*, connection, web, workers: dict, beat, redis_pid: int) -> CpuMeter:
    """A CpuMeter over every process that works on a request or an answer: the gunicorn
    ``web``, each queue's worker (``workers``: queue name -> CeleryWorker), ``beat``, the
    Redis at ``redis_pid`` and this database's PostgreSQL backends but ``connection``'s own
    (the benchmark's reads are not the product's work). ``web`` or ``beat`` None: not running."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        own = cursor.fetchone()[0]

    def backends() -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s",
                [own],
            )
            return [row[0] for row in cursor.fetchall()]

    groups = {"gunicorn": lambda: session_pids(web.process.pid)} if web is not None else {}
    for queue, worker in workers.items():
        groups[f"worker {queue}"] = lambda worker=worker: session_pids(worker.process.pid)
    if beat is not None:
        groups["beat"] = lambda: session_pids(beat.process.pid)
    groups["postgresql"] = backends
    groups["redis"] = lambda: [redis_pid]
    return CpuMeter(groups)


REFERENCE_LOOP_SIZE = 1_000_000


def reference_loop_ms(*, repeats: int = 3, size: int = REFERENCE_LOOP_SIZE) -> float:
    """The machine's speed now: CPU milliseconds of a fixed pure-Python loop, the median
    of ``repeats``. A shared host's speed moves by half within a morning; a run's figures
    printed beside it can be compared with another day's."""
    timings = []
    for _ in range(repeats):
        started = time.process_time()
        total = 0
        for value in range(size):
            total += value * value % 7
        timings.append(time.process_time() - started)
    return 1000 * statistics.median(timings)
