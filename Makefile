# Two commands for a newcomer: `make run` (app on the seeded demo database) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]" -c constraints.txt
	touch $@

.PHONY: install run demo test lint bench e2e clean
install: $(BIN)/.installed

demo: install
	$(BIN)/skillorchestra demo

run: demo
	@$(BIN)/python -m skillorchestra_core.portcheck $(PORT)
	$(BIN)/streamlit run app.py --server.port $(PORT)

test: install
	$(BIN)/python -m pytest -m "not bench"

e2e: install
	$(BIN)/python -m pytest -m e2e

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy skillorchestra_core app.py pages

bench: install
	$(BIN)/python -m pytest -m bench -s -p no:randomly

clean:
	rm -rf $(VENV) artifacts .pytest_cache
