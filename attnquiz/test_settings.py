"""Settings for the test suite: the real settings, with explicit throw-away secrets.

Everything else (DATABASE_URL, REDIS_URL) still comes from the environment, so the
same suite runs on SQLite or on PostgreSQL with a real Redis.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("VARIANT_SEED_SECRET", "test-variant-seed-secret")

from .settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Unit tests grade in-process; integration tests switch to a real worker explicitly.
GRADING_MODE = os.environ.get("GRADING_MODE", "inline")
# Short waits: unit tests grade at commit, after the view has answered.
GRADING_LONG_POLL_SECONDS = float(os.environ.get("GRADING_LONG_POLL_SECONDS", "0.3"))
# Open exam pages ask for their deadline every 5 s in tests, as the e2e tests of a live extension expect.
EXAM_DEADLINE_POLL_SECONDS = int(os.environ.get("EXAM_DEADLINE_POLL_SECONDS", "5"))

# The test client's login() calls authenticate() without a request, which django-axes
# refuses; the sign-in throttling tests switch it back on.
AXES_ENABLED = False

# Answers are not rate-limited in tests unless a test asks (tests reuse user ids quickly);
# each xdist worker gets its own cache key space in a shared Redis.
SUBMIT_RATE_BURST = int(os.environ.get("SUBMIT_RATE_BURST", "0"))
JOIN_RATE_BURST = int(os.environ.get("JOIN_RATE_BURST", "0"))
ACCOUNT_CONFIRMATION_LINKS_BURST = int(os.environ.get("ACCOUNT_CONFIRMATION_LINKS_BURST", "0"))
# Nor deadline polls: the e2e tests' pages poll every 5 s, from ids reused between runs.
EXAM_DEADLINE_POLL_BURST = int(os.environ.get("EXAM_DEADLINE_POLL_BURST", "0"))
EXAM_DEADLINE_POLL_USER_BURST = int(os.environ.get("EXAM_DEADLINE_POLL_USER_BURST", "0"))
CACHES["default"]["KEY_PREFIX"] = os.environ.get("PYTEST_XDIST_WORKER", "")  # noqa: F405
# Each xdist worker has its own list of pending follow-ups in a shared Redis (and each test
# its own, from the root conftest).
FOLLOWUP_PENDING_KEY = f"{FOLLOWUP_PENDING_KEY}:{os.environ.get('PYTEST_XDIST_WORKER', '')}"  # noqa: F405
