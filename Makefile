# Thin wrapper over CMake and the scripts; the README's two commands are
# `make demo` and `make test`.
BUILD   ?= build
MPICC   ?= $(shell command -v mpicc.openmpi || command -v mpicc)
JOBS    ?= 2

FUZZ_SECONDS ?= 60

.PHONY: all build demo test fuzz unit pytest format-check clean

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
	@scripts/fuzz.sh --ci --seconds 3
	@CONTEND_BUILD=$(abspath $(BUILD)) .venv/bin/python -m pytest -q -ra tests/python

# libFuzzer harnesses (clang, ASan, UBSan) for FUZZ_SECONDS each; the
# inputs that add coverage are kept in fuzz/corpus (docs/fuzzing.md)
fuzz:
	@scripts/bootstrap.sh test
	@scripts/fuzz.sh --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD)
