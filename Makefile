# Thin wrapper over CMake and the scripts; the README's two commands are
# `make demo` and `make test`.
BUILD   ?= build
MPICC   ?= $(shell command -v mpicc.openmpi || command -v mpicc)
JOBS    ?= 2

.PHONY: all build demo test unit pytest format-check clean

all: build

build:
	@scripts/bootstrap.sh build
	@cmake -S . -B $(BUILD) -DMPI_C_COMPILER=$(MPICC) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@scripts/link-tools.sh $(BUILD)/bin

demo: build
	@scripts/demo.sh $(BUILD)/bin/contend

test: build
	@scripts/bootstrap.sh test
	@scripts/link-tools.sh $(BUILD)/bin
	@scripts/format-check.sh
	@cd $(BUILD) && ctest --output-on-failure
	@CONTEND_BUILD=$(abspath $(BUILD)) .venv/bin/python -m pytest -q -ra tests/python

clean:
	rm -rf $(BUILD)
