# Two entry points: `make demo` and `make test`. Each does its own set-up from a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Where pip finds the CPU build of torch. Empty here (this machine's pip has the CPU wheel locally);
# elsewhere use `make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu` to avoid a CUDA build.
TORCH_INDEX ?=
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	# CPU build of torch first (a bare `torch` pulls a multi-GB CUDA build)
	$(PY) -m pip install torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	# llama-cpp-python compiles from source; skip the multimodal library (~3 min)
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(PY) -m pip install -e '.[local,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ideaharness demo

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) runs/demo
