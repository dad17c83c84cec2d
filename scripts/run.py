"""Serve attnquiz with demo data: `make run` calls this after installing and migrating.

Grades through real Celery workers when Redis answers at REDIS_URL, otherwise in the web
process. Without REDIS_URL each checkout uses a Redis database of its own (1-15, from its
path), and a clear warning is printed when another checkout already uses the one it gets,
so two checkouts on one machine never take each other's tasks unannounced. HOST and PORT
choose where the web server listens (127.0.0.1:8000). The logins and the URL are
printed last, once the web server answers and the workers reply to a ping, so they are
not lost above the servers' own start-up lines. A worker that exits is started again.
Ctrl-C stops everything and exits 0.

The web server is Django's runserver, a thread per request, so it keeps no database
connection past its request (CONN_MAX_AGE=0: a finished thread's kept connection stayed
open on PostgreSQL); the workers keep the settings' CONN_MAX_AGE.

It serves as production does (DEBUG=0: the styled 404/500 pages, the enforced CSP,
static files from whitenoise after collectstatic), with a development SECRET_KEY kept
in var/ and the HTTPS-only settings relaxed for plain http on this machine.
`DEBUG=1 make run` gives Django's debug pages instead.
"""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from urllib.parse import urlparse

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"  # what REDIS_URL names when set by hand
ROOT = Path(__file__).resolve().parent.parent
DEV_SECRET_FILE = ROOT / "var" / "dev-secret-key"
READY_TIMEOUT_SECONDS = 60


def redis_answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), 1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def checkout_redis_db(root: Path = ROOT) -> int:
    """This checkout's own Redis database: 1-15 from its path (0 is left to hand-made set-ups)."""
    return 1 + zlib.crc32(str(root).encode()) % 15


def default_redis_url(root: Path = ROOT) -> str:
    return f"redis://127.0.0.1:6379/{checkout_redis_db(root)}"


CHECKOUT_KEY = "attnquiz:checkout"


def redis_claimed_by(url: str, root: Path = ROOT) -> str | None:
    """The other checkout already using this Redis database (its path), or None; claims the
    database for this checkout when it is free. Any failure reads as free."""
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=1)
        owner = client.get(CHECKOUT_KEY)
        if owner is not None and owner.decode() != str(root):
            return owner.decode()
        client.set(CHECKOUT_KEY, str(root))
    except Exception:
        return None
    return None


def shared_redis_warning(url: str, other: str) -> str:
    return (f"Warning: the Redis database at {url} is also used by the checkout at {other}; "
            "its workers would take this checkout's tasks. Set REDIS_URL to another database "
            "(redis://127.0.0.1:6379/N, N from 1 to 15) to keep them apart.")


def dev_secret_key() -> str:
    """A random key made once and kept, so logins survive a restart of `make run`."""
    if not DEV_SECRET_FILE.exists():
        DEV_SECRET_FILE.parent.mkdir(parents=True, exist_ok=True)
        DEV_SECRET_FILE.write_text(secrets.token_urlsafe(50))
        DEV_SECRET_FILE.chmod(0o600)
    return DEV_SECRET_FILE.read_text().strip()


def serving_env() -> dict:
    env = dict(os.environ, DEBUG=os.environ.get("DEBUG", "0"))
    if env["DEBUG"].lower() not in ("1", "true", "yes", "on"):
        if not env.get("SECRET_KEY"):
            env["SECRET_KEY"] = dev_secret_key()
        # Plain http on this machine: no redirect to https, no HSTS, cookies sent over http.
        env.update(SECURE_SSL_REDIRECT="0", SECURE_HSTS_SECONDS="0",
                   SESSION_COOKIE_SECURE="0", CSRF_COOKIE_SECURE="0")
        # E-mails (password resets) are printed here, as in development.
        env.setdefault("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
    return env


def web_server_env(env: dict) -> dict:
    """The web server's environment: ``env`` with persistent database connections off.

    Django's runserver answers each request on a thread of its own, and each thread opens its
    own connection; kept for CONN_MAX_AGE (60 s, meant for gunicorn's long-lived threads),
    every finished thread left one idle on PostgreSQL until the server refused new ones. With
    0 each request closes its connection when it ends. The workers keep the setting: each is
    one long-lived process that reuses its connection."""
    return dict(env, CONN_MAX_AGE="0")


def port_answers(host: str, port: str) -> bool:
    try:
        with socket.create_connection((host, int(port)), 0.5):
            return True
    except OSError:
        return False


def wait_until(ready, *, stopping, timeout: float = READY_TIMEOUT_SECONDS) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping():
        if ready():
            return True
        time.sleep(0.3)
    return False


def workers_answer(python: str, env: dict, names: list[str]) -> bool:
    ping = subprocess.run(
        [python, "-m", "celery", "-A", "attnquiz", "inspect", "ping", "--timeout=1",
         "-d", ",".join(names)],
        env=env, cwd=ROOT, capture_output=True, text=True,
    )
    return ping.returncode == 0 and all(name in ping.stdout for name in names)


class Supervised:
    """A worker process that is started again when it exits (at most once per RESTART_SECONDS,
    so a worker that cannot start does not spin)."""

    RESTART_SECONDS = 5.0

    def __init__(self, command: list[str], *, env: dict):
        self.command, self.env = command, env
        self.process = subprocess.Popen(command, env=env, cwd=ROOT)
        self.started_at = time.monotonic()

    def restart_if_exited(self) -> bool:
        if self.process.poll() is None or time.monotonic() - self.started_at < self.RESTART_SECONDS:
            return False
        print(f"{self.command[self.command.index('-n') + 1]} exited with {self.process.returncode}; "
              "starting it again", file=sys.stderr, flush=True)
        self.process = subprocess.Popen(self.command, env=self.env, cwd=ROOT)
        self.started_at = time.monotonic()
        return True


def main() -> int:
    python = sys.executable
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    redis_url = os.environ.get("REDIS_URL") or default_redis_url()
    env = serving_env()
    processes: list[subprocess.Popen] = []
    supervised: list[Supervised] = []
    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    # Ctrl-C reaches every process of the terminal's group: the servers stop themselves,
    # and this script only waits for them and exits 0 (make then reports no error).
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        if env["DEBUG"] == "0":
            subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                           env=env, cwd=ROOT, check=True)
        worker_names = []
        if redis_answers(redis_url):
            env.update(REDIS_URL=redis_url, GRADING_MODE="celery")
            grading = f"Grading: through Celery workers, Redis at {redis_url}."
            other = redis_claimed_by(redis_url)
            if other:
                grading += "\n" + shared_redis_warning(redis_url, other)
            hostname = socket.gethostname()
            worker_names = [f"grading@{hostname}", f"practice@{hostname}", f"followups@{hostname}"]
            supervised.append(Supervised(
                [python, "-m", "celery", "-A", "attnquiz", "worker", "--beat",
                 "--schedule", "var/celerybeat-schedule",
                 "--loglevel=WARNING", "--concurrency=2", "--pool=prefork",
                 "-Q", "grading", "-n", worker_names[0]], env=env))
            # Practice answers have their own queue and worker, so they never hold up graded ones.
            supervised.append(Supervised(
                [python, "-m", "celery", "-A", "attnquiz", "worker",
                 "--loglevel=WARNING", "--concurrency=1", "--pool=prefork",
                 "-Q", "practice", "-n", worker_names[1]], env=env))
            # What a grade feeds (mastery, spaced review): one task per grade, on its own queue.
            supervised.append(Supervised(
                [python, "-m", "celery", "-A", "attnquiz", "worker",
                 "--loglevel=WARNING", "--concurrency=1", "--pool=prefork",
                 "-Q", "followups", "-n", worker_names[2]], env=env))
            processes.extend(worker.process for worker in supervised)
        else:
            env.update(REDIS_URL="", GRADING_MODE="inline")
            grading = f"Grading: in the web process (no Redis answered at {redis_url})."
        demo = subprocess.run([python, "manage.py", "load_demo"], env=env, cwd=ROOT,
                              check=True, capture_output=True, text=True)
        server = subprocess.Popen(
            [python, "manage.py", "runserver", f"{host}:{port}", "--noreload"],
            env=web_server_env(env), cwd=ROOT)
        processes.insert(0, server)
        is_stopping = lambda: stopping or server.poll() is not None  # noqa: E731
        wait_until(lambda: port_answers(host, port), stopping=is_stopping)
        if worker_names and not wait_until(lambda: workers_answer(python, env, worker_names),
                                           stopping=is_stopping):
            grading += " (the workers have not answered a ping yet)"
        if not is_stopping():
            # load_demo's summary and logins, without the bank loader's lines above them.
            summary = demo.stdout[demo.stdout.find("Demo course"):].strip()
            print(
                f"\n{summary}\n"
                f"New course: log in as instructor, open http://{host}:{port}/courses/new/ "
                "(others: manage.py grant_course_creation USERNAME).\n"
                f"Join link and code: each course's Settings page, e.g. "
                f"http://{host}:{port}/courses/attention-101/settings/\n"
                f"{grading}\n"
                f"\nattnquiz is at http://{host}:{port}/  (Ctrl-C stops it)\n",
                flush=True,
            )
        while not stopping and server.poll() is None:
            time.sleep(0.2)
            for worker in supervised:
                if not stopping and worker.restart_if_exited():
                    processes.append(worker.process)
    except subprocess.CalledProcessError as failed:
        if stopping:  # interrupted while setting up
            return 0
        sys.stderr.write(failed.stderr or "")
        return failed.returncode or 1
    finally:
        shut_down(processes)
    # Stopped by the user: a clean exit. The server ending by itself is reported as it ended.
    return 0 if stopping else abs(server.returncode or 0)


def shut_down(processes: list[subprocess.Popen]) -> None:
    """Let each process finish (Ctrl-C already reached them); SIGTERM, then kill, if not."""
    for process in processes:
        if process.poll() is None:
            try:
                process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


if __name__ == "__main__":
    sys.exit(main())
