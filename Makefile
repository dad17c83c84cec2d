# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test install migrate demo browser worker check-deploy validate-bank clean load load-db bench bench-workers scale-test

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

migrate: install
	mkdir -p var
	DEBUG=1 $(PY) manage.py migrate --noinput

run: migrate
	$(PY) scripts/run.py

# The suite runs against real PostgreSQL and Redis (started if needed) and Debian's Chromium.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/attnquiz
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

test: install
	bash scripts/services.sh
	bash scripts/install_browser.sh
	$(VENV)/bin/lint-imports
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -q -n 2 --dist loadgroup

# Two gunicorn nodes behind Debian's nginx (installed if missing) and two worker nodes on one
# PostgreSQL and Redis: sessions, throttle, lockout, exam binding and long poll hold on either;
# two beats send each periodic task once.
scale-test: install
	bash scripts/services.sh
	command -v nginx >/dev/null || test -x /usr/sbin/nginx || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx)
	ATTNQUIZ_SCALE_TEST=1 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	  $(PY) -m pytest -q attnquiz/tests/test_scale_out.py grading/tests/test_beat_once.py

# Exam-start spike of N students on the production stack: `make load` (2,000 students,
# 30-90 s think time), `make load N=200 THINK=2,5` for a quick run. Never part of `make test`.
# locust lives in its own virtualenv: its gevent and its pytest plugin stay out of the app's.
N ?= 2000
THINK ?= 30,90
# PROFILE=exam-start: everyone signed in before, the exam opens, all press Start within 60 s.
PROFILE ?= sign-in
# WEB=6x4: gunicorn's workers x threads for the run (production's 3x8 by default).
WEB ?= 3x8
# VARIANTS=first-view: the first views draw the variants (no draws kept before the exam
# opens); stored: every variant made before the run; prepared (default): as production.
VARIANTS ?= prepared
LOAD_DB ?= attnquiz_load
LOAD_VENV := .venv-load
LOAD_ENV = DJANGO_SETTINGS_MODULE=attnquiz.load_settings DEBUG=0 ALLOWED_HOSTS=127.0.0.1 \
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/$(LOAD_DB) \
  SECRET_KEY=load-only-secret-key-never-used-in-production-0123456789 \
  VARIANT_SEED_SECRET=load-only-variant-seed-secret-0123456789

$(LOAD_VENV)/.installed: requirements-load.txt
	$(PYTHON) -m venv $(LOAD_VENV)
	$(LOAD_VENV)/bin/python -m pip install --quiet -r requirements-load.txt
	touch $@

load-db: install
	bash scripts/services.sh
	psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$(LOAD_DB)'" | grep -q 1 \
	  || createdb -h 127.0.0.1 -U postgres $(LOAD_DB)
	$(LOAD_ENV) $(PY) manage.py migrate --noinput -v 0

load: load-db $(LOAD_VENV)/.installed
	$(LOAD_ENV) $(PY) manage.py load_exam --students $(N) --think $(THINK) --profile $(PROFILE) --web $(WEB) --variants $(VARIANTS)

# Throughput and CPU per answer on the production stack (docs/perf/README.md); ROUNDS=3.
ROUNDS ?= 3
bench: load-db
	$(LOAD_ENV) $(PY) manage.py bench_http --rounds $(ROUNDS)

# Graded/s of the grading worker alone at 1, 2 and 4 pool processes (docs/deploy.md).
bench-workers: load-db
	$(LOAD_ENV) $(PY) manage.py bench_workers --rounds $(ROUNDS)

validate-bank: migrate
	DEBUG=1 $(PY) manage.py validate_bank

check-deploy: install
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=attnquiz.example.org \
	  $(PY) manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) $(LOAD_VENV) var staticfiles test-artifacts
