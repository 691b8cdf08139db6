# Two entry points for a newcomer (see README): `make plan` and `make test`.
# Both create .venv and install cryptoplan into it as a regular (non-editable)
# package, so what runs is what `pip install .` ships, with every dependency at
# the version of constraints.txt: the versions the suite last passed with.
# pyproject.toml keeps compatible ranges for people who `pip install` cryptoplan
# into an environment of their own; `make test-latest` tries the newest the
# ranges allow, so drift shows up in a named job and not as a red main.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check
LOCK := constraints.txt
PYTEST_ARGS ?=
# Both cores (pytest-xdist): one worker per core; work stealing, so that the worker left with
# the long tests gives its queue to the other.  Every test has a time budget (pytest-fail-slow):
# FAIL_SLOW unless it declares its own with @pytest.mark.fail_slow (docs/development.md, "Tiers").
# PYTHONDONTWRITEBYTECODE is cleared for the run so that pytest keeps the test modules it has
# rewritten (tests/__pycache__): seconds a worker, every run after the first.
WORKERS ?= auto
FAIL_SLOW ?= 20s
PYTEST := PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest -q -n $(WORKERS) --dist worksteal --fail-slow=$(FAIL_SLOW)
FAST := not slow and not subprocess and not libreoffice and not mypy

.PHONY: venv plan test test-fast test-latest bench lock clean

venv:
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PIP) -c $(LOCK) ".[test]"

plan: venv
	$(VENV)/bin/cryptoplan demo

# pytest is started through its script, not `python -m pytest`, so the
# checkout is not on sys.path: the tests import the installed package.
# The whole suite, as CI runs it: the 25 slowest tests and the line coverage printed at the end.
test: venv
	$(PYTEST) --durations=25 --cov --cov-report=term $(PYTEST_ARGS)

# The loop between edits (under 90 s on 2 cores): no slow, subprocess, LibreOffice or mypy test.
test-fast: venv
	$(PYTEST) -m "$(FAST)" $(PYTEST_ARGS)

# The newest releases pyproject's ranges allow, in a venv of their own, fast tier.
test-latest:
	@test -x .venv-latest/bin/python || python3 -m venv .venv-latest
	@.venv-latest/bin/python -m pip install -q --disable-pip-version-check --upgrade --upgrade-strategy eager ".[test]"
	@.venv-latest/bin/python -m pip list --format=freeze 2>/dev/null | grep -i -E '^(numpy|scipy|openpyxl|xlwings|hypothesis|ciw)=='
	PYTHONDONTWRITEBYTECODE= .venv-latest/bin/pytest -q -n $(WORKERS) --dist worksteal -m "$(FAST)" $(PYTEST_ARGS)

bench: venv
	@$(PIP) -c $(LOCK) ".[bench]"
	$(PY) tests/bench_erlang.py
	$(PY) tests/bench_recalc.py
	$(PY) tests/bench_recalc_rows.py
	$(PY) tests/bench_ams.py

# Refresh the lock: resolve pyproject's ranges (runtime, test and bench extras) to
# today's newest releases, for every platform and Python >= 3.11.  Run `make test`
# afterwards and commit constraints.txt with the fixes it needs.
lock: venv
	@$(PIP) uv
	$(PY) -m uv pip compile pyproject.toml --extra test --extra bench --universal \
	    --python-version 3.11 --upgrade -o $(LOCK)

clean:
	rm -rf $(VENV) .venv-latest build *.egg-info
