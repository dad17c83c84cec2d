"""Test-wide defaults: tests run with an explicit, throw-away configuration."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
