# The book's commands. Each target does its own setup: a fresh machine needs only Python 3.11+
# and the package registries.
#
#   make book       install, execute every notebook (book profile), build _build/html (+ PDF, source)
#   make pdf        the book as one PDF: _build/html/causal-fair-bandits.pdf
#   make test       install, run the whole test suite (unit, notebooks + nbval, book build, browser)
#   make lint       ruff: line length, pyflakes, import order (also run by make test)
#   make bench      vectorised runner against a plain loop over runs
#   make mutants    small plausible bugs (tests/mutants/) each applied to a copy: are they all caught?
#   make reproduce  every chapter at its paper profile -> results/paper/ (CHAPTER=name for one),
#                   then every open choice's alternatives at the book profile -> results/sensitivity/
#                   (SCHEDULER=tcp://HOST:PORT or SCHEDULER=local: on a Dask cluster, also for verify)
#   make sensitivity  only the open choices' alternatives (CHAPTER=name for one), and the report
#   make verify     re-run every committed paper-scale record and compare its results (slow)
#   make serve      serve the built book on http://127.0.0.1:8000
#   make lock       re-resolve requirements.lock and environment.yml from pyproject.toml

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP_VERSION := 26.3
PORT ?= 8000
CHAPTER ?= all
# pytest workers for the notebook tests (2 cores here)
JOBS ?= 2
# a Dask scheduler (tcp://HOST:PORT, or local) for reproduce, sensitivity and verify; empty: local processes
SCHEDULER ?=
ON_CLUSTER := $(if $(SCHEDULER),--scheduler $(SCHEDULER))

export PYTHONHASHSEED := 0
# One arithmetic on every x86-64 machine with AVX2, for the tests, the book and every execution
# (causalbandits_lib.book.execution.blas_environment sets the same for runs outside make):
# OpenBLAS's Haswell kernels, and numpy without its AVX-512 code paths (their last bits differ).
CPUFLAGS := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
ifneq ($(and $(filter avx2,$(CPUFLAGS)),$(filter fma,$(CPUFLAGS))),)
export OPENBLAS_CORETYPE ?= Haswell
endif
ifneq ($(filter avx512f,$(CPUFLAGS)),)
export NPY_DISABLE_CPU_FEATURES ?= X86_V4 AVX512_ICL AVX512_SPR
endif
# one BLAS thread: a product split over threads sums in another order
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: help setup mathjax book pdf lint test test-unit test-notebooks test-book bench mutants mutants-ci reproduce sensitivity report verify serve lock clean

help:
	@sed -n '1,16p' Makefile

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version' 
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "pip==$(PIP_VERSION)"
	$(PY) -m pip install --quiet --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	@touch $(STAMP)

setup: $(STAMP)

# MathJax from the npm registry (version pinned by tools/mathjax/package-lock.json), served from the
# book itself so that formulas render offline.
MATHJAX := static/mathjax/tex-mml-chtml.js
$(MATHJAX): tools/mathjax/package.json tools/mathjax/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to fetch MathJax (apt-get install npm)"; exit 1; }
	cd tools/mathjax && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	rm -rf static/mathjax
	mkdir -p static
	cp -r tools/mathjax/node_modules/mathjax/es5 static/mathjax
	@touch $(MATHJAX)

mathjax: $(MATHJAX)

# The jupyter-cache used by `execute_notebooks: cache` keys on a notebook's code cells only, so a
# change in the library, the pins, the parameters or the committed paper-scale records (which the
# notebooks display) would not re-execute the notebooks: clear the cache whenever one changes.
# Every library file at any depth (tracked or not; caches excluded), sorted so the order is stable.
LIBFILES = $(shell find causalbandits_lib -type f ! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort)
LIBHASH = $(shell cat $(LIBFILES) requirements.lock notebooks/*/parameters.yml results/paper/*/*.json results/sensitivity/*/*.json 2>/dev/null | sha256sum | cut -c1-16)

# A failed build leaves _build/.book-failed: Sphinx does not re-read unchanged pages, so a warning
# would not be raised again and a second `make book` would turn green; instead the next build
# starts from scratch (the execution cache is kept unless the library changed).
# CAUSALBANDITS_PUBLISH=1: a page that would run on a stand-in for a real data set (Adult, yeast)
# stops the build unless ALLOW_STAND_IN=1.
# The source ships with the site: `git archive` of HEAD as _build/html/causal-fair-bandits-<12 digits
# of the commit>.tar.gz, its SHA-256 in SOURCE.txt and on every page with a source-archive span (the
# landing page), and a CITATION.cff pinned to the commit. From a dirty tree no archive ships: a
# notice here, a banner on every page (causalbandits_lib/book/citation.py).
book: $(STAMP) $(MATHJAX)
	@mkdir -p _build
	@if [ "$$(cat _build/.libhash 2>/dev/null)" != "$(LIBHASH)" ]; then \
	  echo "library or lock changed since the last build: clearing the execution cache"; \
	  rm -rf _build/.jupyter_cache; fi
	@if [ -e _build/.book-failed ]; then \
	  echo "the last build failed: building every page again"; \
	  rm -rf _build/html _build/.doctrees _build/jupyter_execute; fi
	@touch _build/.book-failed
	CAUSALBANDITS_PUBLISH=1 $(BIN)/jupyter-book build . --warningiserror --keep-going --builder html
	@rm -f _build/.book-failed
	@echo "$(LIBHASH)" > _build/.libhash
	$(PY) -m causalbandits_lib.book.citation source-archive _build/html
	$(PY) -m causalbandits_lib.book.pdf _build/html --if-stale --optional
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# The whole book as one PDF (headless Chromium prints each page of the built site; pypdf joins
# them with a title page, bookmarks, page numbers and links inside the PDF), linked from the landing
# page; make book builds it too when Chromium is installed.
pdf: book
	$(PY) -m causalbandits_lib.book.pdf _build/html --if-stale --first-page _build/pdf-first-page.png

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: $(STAMP)
	$(MAKE) --no-print-directory lint test-unit test-notebooks test-book

test-unit: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) -m "not notebooks and not book" tests

test-notebooks: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) -m notebooks tests

test-book: $(STAMP) $(MATHJAX)
	$(PY) -m pytest -m book tests

# The peer library (MABWiser) is only needed here, not by the book: pinned in its own lock.
bench: $(STAMP)
	$(PY) -m pip install --quiet --no-deps -r requirements-bench.lock
	$(PY) -m benchmarks --out _build/bench.json

# Every mutant of tests/mutants/ applied to a temporary copy of the tree: caught when a unit test
# fails, a code-check claim of the chapter's notebooks (smoke profile) stops being reproduced, or a
# notebook stops with an error (tools/mutants.py); the score goes to results/mutants.json.
mutants: $(STAMP)
	$(PY) tools/mutants.py --out results/mutants.json

# What CI runs after make test: the first mutant of each chapter (the chapters' tests just passed).
mutants-ci: $(STAMP)
	$(PY) tools/mutants.py --one-per-chapter --tests-pass

reproduce: $(STAMP)
	$(BIN)/causalbandits run $(CHAPTER) --profile paper --out _build/reproduce --record-dir results/paper --no-progress --jobs $(JOBS) $(ON_CLUSTER)
	$(BIN)/causalbandits sensitivity $(CHAPTER) --profile book --out _build/sensitivity --jobs $(JOBS) $(ON_CLUSTER)
	$(BIN)/causalbandits report

sensitivity: $(STAMP)
	$(BIN)/causalbandits sensitivity $(CHAPTER) --profile book --out _build/sensitivity --jobs $(JOBS) $(ON_CLUSTER)
	$(BIN)/causalbandits report

report: $(STAMP)
	$(BIN)/causalbandits report

serve: $(STAMP)
	@test -f _build/html/index.html || { echo "no built book: run make book first"; exit 1; }
	@echo "serving http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PY) -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

lock:
	rm -rf _build/lockenv
	$(PYTHON) -m venv _build/lockenv
	_build/lockenv/bin/python -m pip install --quiet "pip==$(PIP_VERSION)" "setuptools>=77" wheel
	_build/lockenv/bin/python -m pip install --quiet ".[book,test]"
	_build/lockenv/bin/python tools/write_lock.py _build/lockenv/bin/python

# Every committed paper-scale record re-run with its own parameters and compared with it (results
# hash, then metric by metric): what a reviewer runs on one record, on all of them.
verify: $(STAMP)
	$(BIN)/causalbandits verify results/paper --jobs $(JOBS) $(ON_CLUSTER)

clean:
	rm -rf _build
