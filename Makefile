# Every target bootstraps .venv itself, so a fresh checkout needs only `make run` or `make test`.
# Django 6 needs Python 3.12+: prefer the newest Python found, fall back to python3 (>= 3.11,
# which gets the Django 5.2 LTS line).
PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3) python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# collectstatic (hashed names, gzip + brotli copies) runs again only when an asset changed:
# brotli over plotly.js and the API docs' assets takes a minute or two.
STATIC_MANIFEST := var/static/staticfiles.json
# Where `make run` serves: `make run PORT=8001`, `make run HOST=0.0.0.0`.
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test setup lint format check worker clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11+ not found"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@# LDAP sign-in is optional: python-ldap builds only where its C headers are installed.
	@if test -f /usr/include/ldap.h -a -f /usr/include/sasl/sasl.h; then \
		$(BIN)/python -m pip install -q -e '.[dev,ldap]'; \
	else echo "note: LDAP sign-in not installed (apt-get install libldap2-dev libsasl2-dev, then make again)"; fi
	touch $(STAMP)

setup: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

$(STATIC_MANIFEST): $(STAMP) $(shell find static -type f 2>/dev/null)
	$(BIN)/python manage.py collectstatic --noinput -v0
	touch $(STATIC_MANIFEST)

run: setup $(STATIC_MANIFEST)
	@$(BIN)/python -m perfhub.ports $(HOST) $(PORT)
	$(BIN)/python manage.py ensure_demo_user
	$(BIN)/python manage.py seed_demo
	$(BIN)/python manage.py load_kb --owner demo
	@echo "PerfHub on http://$(HOST):$(PORT)/  (Ctrl-C stops the web server and the worker)"
	PERFHUB_HOST=$(HOST) PERFHUB_PORT=$(PORT) $(BIN)/honcho start

worker: setup
	$(BIN)/celery -A perfhub worker -l info

check: $(STAMP)
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: check lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf var/test_perfhub_*.sqlite3* var/broker var/tmp
