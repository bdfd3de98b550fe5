PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser lint run test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: install
	$(BIN)/passhat run

test: install browser lint
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# Headless Chromium for the browser tests: the HTML report and `passhat serve` (Debian's package, driven by
# Playwright without a download of its own; CI runs as root on a fresh machine).
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser tests will be skipped"

bench: install
	$(BIN)/python bench/harness_overhead.py
	$(BIN)/python bench/report_scale.py

clean:
	rm -rf $(VENV) runs .pytest_cache
