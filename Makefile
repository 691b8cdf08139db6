# Two entry points for a newcomer (see README): `make plan` and `make test`.
# Both create .venv and install cryptoplan into it as a regular (non-editable)
# package, so what runs is what `pip install .` ships.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: venv plan test test-fast bench clean

venv:
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check ".[test]"

plan: venv
	$(VENV)/bin/cryptoplan demo

# pytest is started through its script, not `python -m pytest`, so the
# checkout is not on sys.path: the tests import the installed package.
test: venv
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

test-fast: venv
	$(VENV)/bin/pytest -q -m "not slow" $(PYTEST_ARGS)

bench: venv
	@$(PY) -m pip install -q --disable-pip-version-check ".[bench]"
	$(PY) tests/bench_erlang.py
	$(PY) tests/bench_recalc.py

clean:
	rm -rf $(VENV) build *.egg-info
