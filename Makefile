# The two set-up commands of the README. Each creates (or reuses) .venv on its own.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lit pytest clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first and pinned: this takes the CPU build on disk instead of a multi-GB CUDA download.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e .
	touch $(STAMP)

# The test extra (pytest, expecttest, transformers: see pyproject.toml), for `make test` only.
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[test]'
	touch $(TEST_STAMP)

# Run mlc on the built-in example: a transformer's MLP block, its fused kernel and why it fused.
demo: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python docs/examples/demo.py

# Every test: lit golden tests, then pytest on every core (end-to-end tests run Triton's
# interpreter on CPU; the workers share one compile cache), the 25 slowest tests listed at the end.
test: $(TEST_STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv test/lit
	PATH=$(CURDIR)/$(BIN):$$PATH TRITON_INTERPRET=1 $(BIN)/pytest -n auto --dist worksteal --durations=25

lit: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv test/lit

clean:
	rm -rf $(VENV) build *.egg-info
