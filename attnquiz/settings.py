"""Django settings for attnquiz. Every value comes from the environment.

Defaults give the embedded set-up (SQLite file, in-process grading when Redis is not
reachable). Production sets DEBUG=0, SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL and
REDIS_URL; ``manage.py check --deploy`` then passes with no warnings.
"""

from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
if DEBUG:
    SECRET_KEY = env("SECRET_KEY", default="insecure-development-key-do-not-use-in-production")
else:
    SECRET_KEY = env("SECRET_KEY")  # required: fails loudly if missing in production

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "courses",
    "exercises",
    "grading",
    "explorations",
    "authoring",
    "instructor",
    "lti",
    "accounts",
    "csp",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
    "exams",
    "review",
    "mastery",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "attnquiz.security.ContentSecurityPolicyMiddleware",  # early: every response gets the CSP
    "attnquiz.admission.AdmissionMiddleware",  # a request that queued too long: 503, nothing read
    "attnquiz.errors.DatabaseUnavailableMiddleware",  # a database outage is a styled 503
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "attnquiz.input_limits.RequestSizeMiddleware",  # before the CSRF check reads a form: a body too large is a 413
    "django.middleware.csrf.CsrfViewMiddleware",
    "attnquiz.input_limits.StorableTextMiddleware",  # a NUL refused by a save is a 400, not a 500
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "courses.middleware.CourseTimeZoneMiddleware",  # a course's pages speak its time zone
    "courses.middleware.ArchivedCourseMiddleware",  # an archived course refuses every write
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "lti.middleware.LmsFramingMiddleware",  # after XFrameOptions: it may relax DENY for the LMS
    "axes.middleware.AxesMiddleware",  # last: turns a refused sign-in into the lockout page
    "api.middleware.ApiProblemMiddleware",  # /api/ answers JSON problem details, even for a 500
]

ROOT_URLCONF = "attnquiz.urls"
# The largest form or JSON body read into memory (an exercise source is at most 200 kB;
# files are streamed apart from this); a bigger one is answered 413 with a message.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=1_000_000)

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.tz",  # TIME_ZONE: the zone dates are shown in
            ],
        },
    },
]

WSGI_APPLICATION = "attnquiz.wsgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'attnquiz.sqlite3'}")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web process and a worker share the embedded file.
    # IMMEDIATE transactions take the write lock at BEGIN: SQLite's stand-in for the row
    # lock that serialises counting attempts (grading.services.submission_create).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
        }
    )
# Keep connections open between requests and tasks (a new PostgreSQL connection costs more
# than a whole page); a health check before reuse replaces one the server dropped.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A connection that ended a request or task without a connection error less than this many
# seconds ago skips that health check (attnquiz/postgresql/base.py): in the exam hour every
# connection is busy and the check was a round trip of each request and task; 0 checks always.
DATABASE_PROVEN_SECONDS = env.float("DATABASE_PROVEN_SECONDS", default=1.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "attnquiz.postgresql"  # Django's, see DATABASE_PROVEN_SECONDS
    # An unreachable server fails a request (a 503 page, a failed readiness probe) in
    # seconds instead of hanging it for the operating system's TCP timeout.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5)
    )
    # The prepared reads (attnquiz/prepared_reads.py) are planned once per connection as
    # server-side prepared statements; the ORM's own queries never are (Django binds their
    # values on the client). Off (0) behind a PgBouncer in transaction mode that keeps no
    # prepared statements (max_prepared_statements = 0; docs/deploy.md, PgBouncer).
    DATABASES["default"]["OPTIONS"].setdefault(
        "prepare_threshold", 0 if env.bool("DATABASE_PREPARED_STATEMENTS", default=True) else None
    )
    # Behind PgBouncer in transaction mode a named cursor cannot outlive its transaction
    # (docs/deploy.md, PgBouncer).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env.bool(
        "DATABASE_DISABLE_SERVER_SIDE_CURSORS", default=False
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

# --- Sign-in throttling (django-axes): failures lock a username at one address, not everywhere ---
# Only password sign-ins go through authenticate(); LTI launches log in without it, so an
# LMS user is never locked out by this.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "accounts.backends.UsernameOrEmailBackend",  # a username or an e-mail address
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
# Two tiers (attnquiz/lockout.py): the username from one address, and a much higher limit
# for one username over all addresses. Never one address over all usernames: many students
# share a lecture hall's address, and others' failures must not pause their accounts.
AXES_HANDLER = "attnquiz.lockout.TieredLockoutHandler"  # in the database: holds with Redis down
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]  # what a successful sign-in clears
LOGIN_USERNAME_FAILURE_LIMIT = env.int("LOGIN_USERNAME_FAILURE_LIMIT", default=100)
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # a refused try does not restart it
AXES_USERNAME_FORM_FIELD = "username"  # the field name of Django's AuthenticationForm
AXES_RESET_ON_SUCCESS = True
# The client's address behind EXAM_TRUSTED_PROXIES proxies, not the proxy's (attnquiz/lockout.py).
AXES_CLIENT_IP_CALLABLE = "attnquiz.lockout.lockout_address"
AXES_LOCKOUT_CALLABLE = "attnquiz.lockout.lockout_response"
AXES_USERNAME_CALLABLE = "attnquiz.lockout.lockout_username"  # the name as typed, one per account and form

# --- Accounts and e-mail ---
# Sign-up is open to anyone unless switched off; with verification on, a new account waits
# until the person follows the link e-mailed to them. A changed address always waits for its
# link, and an address finds an account for others only once confirmed (accounts.models).
ACCOUNT_SIGNUP_OPEN = env.bool("ACCOUNT_SIGNUP_OPEN", default=True)
ACCOUNT_EMAIL_VERIFICATION = env.bool("ACCOUNT_EMAIL_VERIFICATION", default=False)
# Confirmation links one account may have sent (sign-up, profile): a burst, then per hour.
ACCOUNT_CONFIRMATION_LINKS_BURST = env.int("ACCOUNT_CONFIRMATION_LINKS_BURST", default=5)
ACCOUNT_CONFIRMATION_LINKS_PER_HOUR = env.float("ACCOUNT_CONFIRMATION_LINKS_PER_HOUR", default=5.0)
# Development prints e-mails (password resets) on the console; production speaks SMTP.
EMAIL_BACKEND = env(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=587)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=True)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="attnquiz <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)

# --- Security (production defaults; DEBUG relaxes the ones that need HTTPS) ---
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz/(live/)?$"]  # container health checks speak plain HTTP
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"

# Content-Security-Policy, enforced on every response (django-csp 4 format). No inline
# script anywhere: every script is a file under static/. frame-ancestors is added per
# response from LTI_FRAME_ANCESTORS (lti.middleware.frame_ancestors). MathLive writes
# style="…" attributes into the markup of its editor, hence 'unsafe-inline' for style
# *attributes* only; <style> elements and stylesheets still come from 'self' alone.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
    },
}
# Browser features no page here uses, switched off for the page and every frame in it.
PERMISSIONS_POLICY = {
    feature: []
    for feature in (
        "accelerometer", "camera", "display-capture", "geolocation", "gyroscope", "hid",
        "magnetometer", "microphone", "midi", "payment", "serial", "usb",
    )
}

# --- Inside an LMS (LTI 1.3): opt in by naming the LMS origins allowed to frame us ---
# With origins set, the LMS may show attnquiz in an iframe, and (over HTTPS) the session
# and CSRF cookies are sent on its cross-site requests. Without them nothing changes.
LTI_FRAME_ANCESTORS = env.list("LTI_FRAME_ANCESTORS", default=[])
if LTI_FRAME_ANCESTORS and not DEBUG:
    SESSION_COOKIE_SAMESITE = "None"
    CSRF_COOKIE_SAMESITE = "None"

# --- Grading pipeline ---
# Empty REDIS_URL means "no broker": grading runs in-process (the embedded default).
REDIS_URL = env("REDIS_URL", default="")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=20)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=30)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis redelivers an unacked task after this many seconds (a dead worker's task).
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=60),
    # How often a worker looks for tasks a dead worker took and never acknowledged.
    "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
    "unacked_restore_throttle": 1,
    "max_retries": 0,
    "socket_connect_timeout": 1,
    "socket_timeout": 2,
}
# A submit's publish to a dead broker gives up within this many seconds (the answer is
# stored; the sweeper sends it).
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=1.0)
CELERY_TASK_PUBLISH_RETRY = False
# A worker survives its broker restarting (attnquiz.worker); a task running when the
# connection is lost finishes (grading is idempotent, its message comes back and is a no-op).
CELERY_WORKER_CONSUMER = "attnquiz.worker:Consumer"
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Celery's Django fix-up closes every database connection before and after each task; this
# only closes them every so many tasks, and attnquiz.celery closes broken or expired ones
# (CONN_MAX_AGE) after each task, as Django does after each request.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
CELERY_TASK_DEFAULT_QUEUE = env("GRADING_QUEUE", default="grading")
# Practice answers are graded from their own queue by their own workers (fair grading).
PRACTICE_QUEUE = env("PRACTICE_QUEUE", default="practice")
# What a grade feeds (mastery, spaced review) runs from its own queue, in batches
# (grading.followup_batch): grades add their ids to a list in Redis, and one drain task,
# due FOLLOWUP_BATCH_SECONDS after the first, runs at most FOLLOWUP_BATCH_MAX of them.
FOLLOWUP_QUEUE = env("FOLLOWUP_QUEUE", default="followups")
FOLLOWUP_PENDING_KEY = env("FOLLOWUP_PENDING_KEY", default="attnquiz:followups:pending")
FOLLOWUP_BATCH_SECONDS = env.float("FOLLOWUP_BATCH_SECONDS", default=1.0)
FOLLOWUP_BATCH_MAX = env.int("FOLLOWUP_BATCH_MAX", default=500)
# A due drain that was lost is replaced by the first grade after this many seconds.
FOLLOWUP_DRAIN_LEASE_SECONDS = env.int("FOLLOWUP_DRAIN_LEASE_SECONDS", default=30)
# Seconds between sweeps announcing exam grades that became visible (each sweep looks back two).
EXAM_VISIBLE_SWEEP_SECONDS = env.float("EXAM_VISIBLE_SWEEP_SECONDS", default=300.0)
# How often an open exam page asks for the student's own deadline (an extension, an early
# close): each page every this many seconds (plus up to a fifth, so pages opened together
# spread out), and once more when its own clock reaches zero. 1,000 pages at 5 s were
# 200 requests a second all exam long; at 30 s, 33.
EXAM_DEADLINE_POLL_SECONDS = env.int("EXAM_DEADLINE_POLL_SECONDS", default=30)
# The deadline poll's rate limit (exams.services.deadline_poll_wait): per student and exam, a
# burst (several tabs, each asking at zero and when shown again), then one ask every 2 s; per
# student over all exams, twice that. Far above what open pages ask; a faster ask gets 429
# with Retry-After and the page asks again then. A burst of 0 switches that limit off.
EXAM_DEADLINE_POLL_BURST = env.int("EXAM_DEADLINE_POLL_BURST", default=10)
EXAM_DEADLINE_POLL_PER_SECOND = env.float("EXAM_DEADLINE_POLL_PER_SECOND", default=0.5)
EXAM_DEADLINE_POLL_USER_BURST = env.int("EXAM_DEADLINE_POLL_USER_BURST", default=20)
EXAM_DEADLINE_POLL_USER_PER_SECOND = env.float("EXAM_DEADLINE_POLL_USER_PER_SECOND", default=1.0)
# How long a confirmation's token holds (attnquiz.confirmations): an instructor who leaves
# the question open longer is asked again, with the numbers as they are then.
CONFIRMATION_MAX_AGE_SECONDS = env.int("CONFIRMATION_MAX_AGE_SECONDS", default=1800)
CELERY_BEAT_SCHEDULE = {
    "requeue-stale-submissions": {
        "task": "grading.tasks.requeue_stale_submissions",
        "schedule": env.float("SWEEP_INTERVAL_SECONDS", default=30.0),
    },
    "send-due-lti-passbacks": {
        "task": "lti.tasks.send_due_passbacks",
        "schedule": env.float("SWEEP_INTERVAL_SECONDS", default=30.0),
    },
    # Exams: close attempts whose time limit or close date is over (their answers count).
    "close-expired-exam-attempts": {
        "task": "exams.tasks.close_expired_attempts",
        "schedule": env.float("EXAM_CLOSE_INTERVAL_SECONDS", default=15.0),
    },
    # Grades an attempt's end or a close date made visible reach mastery and review.
    "announce-visible-exam-grades": {
        "task": "exams.tasks.announce_visible_grades",
        "schedule": EXAM_VISIBLE_SWEEP_SECONDS,
    },
    # Pending follow-ups whose drain was lost, with no grade after them to schedule one.
    "drain-pending-followups": {
        "task": "grading.tasks.run_pending_followups",
        "schedule": env.float("FOLLOWUP_DRAIN_SWEEP_SECONDS", default=30.0),
        "options": {"queue": FOLLOWUP_QUEUE},
    },
    # Releases of grades scheduled for a time (the release confirmation's "Schedule").
    "release-scheduled-grades": {
        "task": "exams.tasks.release_scheduled_grades",
        "schedule": env.float("RELEASE_SCHEDULE_INTERVAL_SECONDS", default=30.0),
    },
}
# Exams about to open: their variants are drawn and rendered this long before the start
# (exams.services.exam_variant_draws_prepare_due, on the follow-ups' queue) and kept in the
# cache until this long after it, so a thousand students opening their first exercise at
# once do not all draw at once. 0 switches it off.
EXAM_DRAWS_AHEAD_SECONDS = env.float("EXAM_DRAWS_AHEAD_SECONDS", default=900.0)
EXAM_DRAWS_KEEP_SECONDS = env.float("EXAM_DRAWS_KEEP_SECONDS", default=7200.0)
if EXAM_DRAWS_AHEAD_SECONDS > 0:
    CELERY_BEAT_SCHEDULE["prepare-exam-variant-draws"] = {
        "task": "exams.tasks.prepare_exam_variant_draws",
        "schedule": env.float("EXAM_DRAWS_INTERVAL_SECONDS", default=60.0),
        "options": {"queue": FOLLOWUP_QUEUE, "expires": 60.0},
    }
# Seconds a pending LMS passback is left to its own task before the sweeper sends it.
LTI_PASSBACK_SWEEP_GRACE_SECONDS = env.int("LTI_PASSBACK_SWEEP_GRACE_SECONDS", default=30)
# "celery": enqueue on commit (worker grades); "inline": grade in the web process.
GRADING_MODE = env("GRADING_MODE", default="celery" if REDIS_URL else "inline")
GRADING_STALE_AFTER_SECONDS = env.int("GRADING_STALE_AFTER_SECONDS", default=60)
# How long a result request may wait for a pending grade before answering "still grading".
GRADING_LONG_POLL_SECONDS = env.float("GRADING_LONG_POLL_SECONDS", default=1.5)
# How long the answer's own response waits for its grade (at most the long poll): a grade
# that comes sooner (on a quiet day: within ~40 ms) is in it; a later one is not waited for
# there. The answer is acknowledged as stored and the page long-polls for the grade, so in
# the exam hour an answer is acknowledged without queueing behind everyone else's grading.
GRADING_SUBMIT_WAIT_SECONDS = env.float("GRADING_SUBMIT_WAIT_SECONDS", default=0.1)
# Admission control (attnquiz.admission, with gunicorn's attnquiz.gunicorn_worker): a
# request that waited longer than this for a thread is answered 503 with this Retry-After.
ADMISSION_MAX_QUEUE_WAIT_SECONDS = env.float("ADMISSION_MAX_QUEUE_WAIT_SECONDS", default=5.0)
ADMISSION_RETRY_AFTER_SECONDS = env.int("ADMISSION_RETRY_AFTER_SECONDS", default=2)
GRADING_MAX_DELIVERIES = env.int("GRADING_MAX_DELIVERIES", default=3)
# Per-student token bucket over every answer posted (graded and practice): a burst, then
# a steady rate; a post over it is answered 429 and nothing is stored. 0 switches it off.
SUBMIT_RATE_BURST = env.int("SUBMIT_RATE_BURST", default=10)
SUBMIT_RATE_PER_SECOND = env.float("SUBMIT_RATE_PER_SECOND", default=1.0)
# Join-code look-ups per address (a burst, then a steady rate): a class behind one NAT joins
# within a couple of minutes, while guessing an 8-letter code stays out of reach.
JOIN_RATE_BURST = env.int("JOIN_RATE_BURST", default=30)
JOIN_RATE_PER_SECOND = env.float("JOIN_RATE_PER_SECOND", default=1.0)
# Fault-injection only: hold each claimed submission this long so tests can kill a worker mid-grade.
GRADING_FAULT_DELAY_SECONDS = env.float("GRADING_FAULT_DELAY_SECONDS", default=0.0)

# --- Spaced review (review/): FSRS cards per practised part ---
# The recall probability FSRS schedules for; the review tasks run on this queue.
REVIEW_DESIRED_RETENTION = env.float("REVIEW_DESIRED_RETENTION", default=0.9)
REVIEW_QUEUE = env("REVIEW_QUEUE", default=PRACTICE_QUEUE)
# A sweeper records the reviews whose task was lost, for grades of the last hour.
REVIEW_SWEEP_WINDOW_SECONDS = env.int("REVIEW_SWEEP_WINDOW_SECONDS", default=3600)
# Only one beat sends, however many run (a PostgreSQL advisory lock; see attnquiz.beat).
CELERY_BEAT_SCHEDULER = env("CELERY_BEAT_SCHEDULER", default="attnquiz.beat:SingleBeatScheduler")
# Heartbeat: beat pings each grading queue; /healthz/ fails when no worker consumed a ping
# for WORKER_STALE_AFTER_SECONDS. A ping nobody takes in time expires instead of piling up.
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=15.0)
WORKER_STALE_AFTER_SECONDS = env.float("WORKER_STALE_AFTER_SECONDS", default=90.0)
HEARTBEAT_QUEUES = sorted({CELERY_TASK_DEFAULT_QUEUE, PRACTICE_QUEUE, REVIEW_QUEUE})
for _queue in HEARTBEAT_QUEUES:
    CELERY_BEAT_SCHEDULE[f"heartbeat-{_queue}"] = {
        "task": "grading.tasks.queue_heartbeat",
        "schedule": WORKER_HEARTBEAT_SECONDS,
        "args": [_queue],
        "options": {"queue": _queue, "expires": WORKER_HEARTBEAT_SECONDS * 2},
    }
CELERY_BEAT_SCHEDULE["record-missing-reviews"] = {
    "task": "review.tasks.record_missing_reviews",
    "schedule": env.float("REVIEW_SWEEP_INTERVAL_SECONDS", default=300.0),
    "options": {"queue": REVIEW_QUEUE},
}

# Secret for per-student variant seeds: stable across restarts and machines.
VARIANT_SEED_SECRET = env("VARIANT_SEED_SECRET", default=SECRET_KEY)

# Redis is a cache, not a dependency: a read that cannot reach it is a miss and a write is
# dropped (django-redis IGNORE_EXCEPTIONS), each bounded by a short timeout, so a
# dead Redis costs milliseconds per request (docs/deploy.md, "When Redis is down").
REDIS_CONNECT_TIMEOUT = env.float("REDIS_CONNECT_TIMEOUT", default=0.2)
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=0.5)
CACHES = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT,
                "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
            },
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Not a traceback per cache call during an outage: /healthz/ reports Redis (as the broker).
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = env.bool("REDIS_LOG_IGNORED_ERRORS", default=False)
# With Redis, a request reads its session from the cache; the database is the truth, and a
# cached copy lives at most SESSION_CACHE_SECONDS (attnquiz.sessions: an outage can leave
# a stale one behind).
SESSION_CACHE_SECONDS = env.int("SESSION_CACHE_SECONDS", default=300)
if REDIS_URL:
    SESSION_ENGINE = "attnquiz.sessions"

# --- REST API (/api/v1/): session or personal API tokens, JSON only, problem details ---
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "api.permissions.TokenScopeAllows",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ApiRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.BoundedJSONParser"],  # depth <= 64, storable text
    "DEFAULT_SCHEMA_CLASS": "api.schema.ApiAutoSchema",
    "EXCEPTION_HANDLER": "api.problems.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "attnquiz API",
    "DESCRIPTION": "Courses, assignments, answers, grades and exercise banks. See docs/api.md.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "SubmissionStatusEnum": "grading.models.SubmissionStatus",
        "RegradeStatusEnum": "instructor.models.RegradeStatus",
        "RegradeRequestStatusEnum": "instructor.models.RegradeRequestStatus",
        "RegradeOutcomeEnum": "instructor.models.RegradeOutcome",
        "VersionStatusEnum": "exercises.models.VersionStatus",
        "TokenScopeEnum": "api.models.TokenScope",
    },
}
# Requests per token (or per signed-in user, or per address when anonymous); "N/sec|min|hour|day".
API_RATE_LIMITS = {
    "token": env("API_RATE_TOKEN", default="120/min"),
    "user": env("API_RATE_USER", default="240/min"),
    "anon": env("API_RATE_ANON", default="30/min"),
}
# The longest a result request may wait for a grade (`?wait=`), in seconds.
API_LONG_POLL_MAX_SECONDS = env.float("API_LONG_POLL_MAX_SECONDS", default=10.0)

# --- Mastery per skill (Bayesian Knowledge Tracing; see mastery/bkt.py) ---
# How often the BKT parameters are refitted from every stored attempt (on the practice
# workers), and how far back that run records grades whose quick update was lost.
MASTERY_FIT_INTERVAL_SECONDS = env.float("MASTERY_FIT_INTERVAL_SECONDS", default=24 * 3600.0)
MASTERY_BACKFILL_DAYS = env.int("MASTERY_BACKFILL_DAYS", default=2)
CELERY_BEAT_SCHEDULE["fit-mastery-parameters"] = {
    "task": "mastery.tasks.fit_skill_parameters",
    "schedule": MASTERY_FIT_INTERVAL_SECONDS,
    "options": {"queue": PRACTICE_QUEUE},
}

# --- Exam access controls (exams/access.py) ---
# How many reverse proxies in front of the web process append to X-Forwarded-For; 0 (the
# default) trusts REMOTE_ADDR alone, so a client cannot choose its address for the
# allowed-networks check by sending the header itself.
EXAM_TRUSTED_PROXIES = env.int("EXAM_TRUSTED_PROXIES", default=0)
# Access-code tries per student and exam: a burst, then this many per minute.
EXAM_CODE_BURST = env.int("EXAM_CODE_BURST", default=5)
EXAM_CODE_PER_MINUTE = env.float("EXAM_CODE_PER_MINUTE", default=2.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_errors_plain": {"()": "attnquiz.log_filters.ClientErrorWithoutTraceback"}},
    "formatters": {
        "django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}", "style": "{"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["client_errors_plain"]},
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Django's own "django" logger brings a console handler that prints under DEBUG=1
        # and keeps every traceback (a 403 printed its whole stack, and every refusal
        # twice): it has no handler of its own here, so its records reach the console above.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        # Configuring "django" resets its children: runserver's request lines keep their own
        # handler and format, as Django's default logging has them.
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
    },
}
