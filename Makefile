# Two commands on a fresh clone: `make verify` (the main job) and `make test` (the test suite).
# Both create .venv, install rebalproof into it, then run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: verify test bench java browser install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { echo "rebalproof needs Python 3.11 or newer as '$(PYTHON)'; install it or run make PYTHON=python3.11" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	@# --no-compile: Python compiles what is imported when it is first imported; byte-compiling
	@# every installed module up front (all of pyspark's) took 10 of the install's 17 s
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e '.[test]'
	@touch $(STAMP)

java:
	@command -v java >/dev/null 2>&1 || { echo "Java 17 is needed by Spark and was not found. Install it (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless; macOS: brew install openjdk@17), then run make again." >&2; exit 2; }

# The trace viewer is tested in a real headless browser: Debian's chromium, installed here when
# missing and we may (root with apt-get); elsewhere the browser test is skipped with a message.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the trace viewer's browser test"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	      || echo "could not install chromium; the browser test will be skipped" >&2; \
	  else \
	    echo "chromium not found: the trace viewer's browser test will be skipped (install Debian's chromium to run it)" >&2; \
	  fi; }

verify: $(STAMP) java
	$(BIN)/rebalproof verify

# The suite starts some hundred Python processes (three test processes, CLI and exec: assignor
# subprocesses, Spark's Python workers), each importing rebalproof and its dependencies. Their
# bytecode is kept in .venv/pycache (PYTHONPYCACHEPREFIX; make clean removes it with .venv) and
# written even where PYTHONDONTWRITEBYTECODE is set, so that each module is compiled (and each
# test module's asserts rewritten by pytest) once, not in every process: with that variable set,
# every process compiled what it imported again (a Spark test file: 13.7 -> 11.4 CPU-s; collecting
# the suite: 4.3 -> 1.2 CPU-s in each test process). The source tree gets no __pycache__ folders.
test: $(STAMP) java browser
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX="$(CURDIR)/$(VENV)/pycache" $(BIN)/python -m pytest -n 3 --dist loadgroup

bench: $(STAMP) java
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(BIN)/python bench/solver.py
	$(BIN)/python bench/explore.py
	$(BIN)/python bench/spark.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
