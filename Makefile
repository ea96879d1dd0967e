# Builds the `deepchess` release binary and copies it to $(EXE): `make EXE=NAME` is how an
# OpenBench worker builds an engine at the root of its repository (docs/openbench.md).
# The variables OpenBench may add (EVALFILE, CC, CXX) do not apply: the networks are
# embedded and the build is cargo's. No target-cpu=native: the bench node count must be the
# same on every worker.

EXE ?= deepchess
CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
SUFFIX := $(if $(filter Windows_NT,$(OS)),.exe,)

.PHONY: all
all:
	$(CARGO) build --release --locked -p deepchess-cli --bin deepchess
	cp "$(TARGET_DIR)/release/deepchess$(SUFFIX)" "$(EXE)$(SUFFIX)"
