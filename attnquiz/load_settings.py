"""Production settings served over plain HTTP on 127.0.0.1: load tests and benchmarks only.

Everything is as in production (DEBUG off, PostgreSQL, Redis, persistent connections)
except what needs HTTPS: cookies are not marked Secure, and static files are served
without a collected manifest; and passwords are hashed with a fast hasher (below).
"""

import os

os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SECURE_HSTS_SECONDS", "0")

from django.conf import global_settings  # noqa: E402

from .settings import *  # noqa: E402,F401,F403

SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# The load test signs 2,000 generated students in within seconds. With PBKDF2 (Django's
# 1,000,000 iterations) each sign-in costs a fraction of a second of CPU, so the spike would
# measure the key derivation alone, for minutes of both cores. Accounts made on this stack
# are hashed, and checked, with a fast hasher listed first (so a sign-in does not re-hash
# them with PBKDF2); PBKDF2 stays listed, so other accounts still sign in. Never point
# these settings at a database with real accounts.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
