# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test install migrate demo browser worker check-deploy validate-bank clean

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
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -q -n 2 --dist loadgroup

validate-bank: migrate
	DEBUG=1 $(PY) manage.py validate_bank

check-deploy: install
	DEBUG=0 SECRET_KEY=$$(head -c 48 /dev/urandom | base64) ALLOWED_HOSTS=attnquiz.example.org \
	  $(PY) manage.py check --deploy --fail-level WARNING

clean:
	rm -rf $(VENV) var staticfiles test-artifacts
