"""Serve attnquiz with demo data: `make run` calls this after installing and migrating.

Grades through a real Celery worker when Redis answers at REDIS_URL (default
redis://127.0.0.1:6379/0), otherwise in the web process; says which on start-up.
"""

import os
import signal
import socket
import subprocess
import sys
from urllib.parse import urlparse

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_answers(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 6379), 1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def main() -> int:
    python = sys.executable
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    redis_url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    env = dict(os.environ, DEBUG=os.environ.get("DEBUG", "1"))
    workers = []
    if redis_answers(redis_url):
        env.update(REDIS_URL=redis_url, GRADING_MODE="celery")
        print(f"Grading: through a Celery worker, Redis at {redis_url}.")
        worker_cmd = [python, "-m", "celery", "-A", "attnquiz", "worker", "--beat",
                      "--schedule", "var/celerybeat-schedule",
                      "--loglevel=WARNING", "--concurrency=2", "--pool=prefork",
                      "-Q", "grading", "-n", "grading@%h"]
        workers.append(subprocess.Popen(worker_cmd, env=env))
        # Practice answers have their own queue and worker, so they never hold up graded ones.
        practice_cmd = [python, "-m", "celery", "-A", "attnquiz", "worker",
                        "--loglevel=WARNING", "--concurrency=1", "--pool=prefork",
                        "-Q", "practice", "-n", "practice@%h"]
        workers.append(subprocess.Popen(practice_cmd, env=env))
    else:
        env.update(REDIS_URL="", GRADING_MODE="inline")
        print(f"Grading: in the web process (no Redis answered at {redis_url}).")
    subprocess.run([python, "manage.py", "load_demo"], env=env, check=True)
    print(f"New course: log in as instructor, open http://{host}:{port}/courses/new/ "
          "(others: manage.py grant_course_creation USERNAME).")
    print(f"Join link and code: each course's Settings page, e.g. http://{host}:{port}/courses/attention-101/settings/")
    print(f"\nattnquiz is at http://{host}:{port}/  (Ctrl-C stops it)\n", flush=True)
    server = subprocess.Popen([python, "manage.py", "runserver", f"{host}:{port}", "--noreload"], env=env)
    try:
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        for process in [server, *workers]:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
