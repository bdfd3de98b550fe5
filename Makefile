PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per extra set: `make run` installs the package alone (small, fast), `make test` the dev extras on top,
# so `make test` after `make run` still installs them (and `make run` after `make test` installs nothing).
BASE := $(VENV)/.installed-base
DEV := $(VENV)/.installed-dev

.PHONY: install install-dev browser lint run test bench clean

install: $(BASE)

install-dev: $(DEV)

# ruff and the bench's tools come with the dev extras (an extra prerequisite line: the targets stay as they are).
lint bench: install-dev

$(VENV)/bin/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(BASE): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

$(DEV): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(DEV) $(BASE)

run: install
	$(BIN)/passhat run
	@echo "To type \`passhat\` instead of $(BIN)/passhat: export PATH=\"$$PWD/$(BIN):\$$PATH\" (or source $(BIN)/activate)."

test: install-dev browser lint
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# Headless Chromium for the browser tests: the HTML report and `passhat serve` (Debian's package, driven by
# Playwright without a download of its own; CI runs as root on a fresh machine). It installs `chromium` alone with
# what it depends on (--no-install-recommends: no recommended extras) and upgrades no other package: no `apt-get
# upgrade`, and --no-upgrade keeps chromium itself as it is when installed (a package already on the system is
# changed only when chromium needs a newer version of it).
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends --no-upgrade chromium) \
		|| echo "chromium could not be installed: the browser tests will be skipped"

bench: install
	$(BIN)/python bench/harness_overhead.py
	$(BIN)/python bench/report_scale.py

clean:
	rm -rf $(VENV) runs .pytest_cache
