# MAES-ROS: set up the pip environment, build, test, lint.
#
#   make setup   create what is missing: .venv (ROS 2 Jazzy wheels), the tf2_msgs / nav2_msgs
#                stand-ins, the workspace in install/. Idempotent: with nothing to do it takes
#                seconds.
#   make test    setup, then pytest over every package (PYTEST_ARGS="..." to pass arguments)
#   make build   rebuild the workspace (colcon) even if nothing seems changed
#   make lint    ruff check and ruff format --check over the repository
#   make clean   remove build outputs (build/ install/ log/ .standins/), keep the venv
#   make distclean   clean, and remove the venv too
#   make constraints regenerate requirements/constraints.txt from a fresh venv
#
# Each setup step writes a stamp file only after it fully succeeded; make compares the stamps
# with their inputs, so an interrupted step is redone and a finished one is not.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
export PYTHON

VENV := .venv
VENV_STAMP := $(VENV)/.maes-venv-ok
STANDINS_STAMP := .standins/install/.maes-build-ok
WS_STAMP := install/.maes-build-ok

VENV_INPUTS := requirements/venv.txt requirements/constraints.txt \
	scripts/setup_venv.sh scripts/patch_ros_cmake.py
STANDINS_INPUTS := $(shell find standins -type f -not -name COLCON_IGNORE 2>/dev/null) \
	scripts/build_ws.sh
# What a colcon rebuild depends on. Python modules are not listed: --symlink-install makes
# edits (and new modules) visible without a rebuild.
WS_INPUTS := $(shell find src \( -name test -o -name __pycache__ \) -prune -o -type f \( \
	-name package.xml -o -name setup.py -o -name setup.cfg -o -name CMakeLists.txt \
	-o -name '*.msg' -o -name '*.srv' -o -name '*.action' -o -path '*/resource/*' \
	-o -path '*/launch/*' -o -path '*/config/*' -o -path '*/params/*' -o -path '*/rviz/*' \
	\) -print 2>/dev/null) scripts/build_ws.sh

# Concurrent `make setup`s in one tree (several engineers, or two terminals) take turns: the
# second one re-checks the stamps after the first finished, and so does nothing.
SETUP_LOCK := /tmp/maes-ros-setup-$(shell printf '%s' "$(CURDIR)" | cksum | cut -d' ' -f1).lock
LOCKED := $(shell command -v flock >/dev/null 2>&1 && echo "flock $(SETUP_LOCK)")

PYTEST_ARGS ?=
# make run: the run's config, whether the built-in controllers drive the robots (builtin|none),
# the real-time factor (0 = as fast as possible) and extra maes_run arguments.
CONFIG ?= maes_config.yaml
CONTROLLERS ?= builtin
RTF ?= 2
RUN_ARGS ?=
# make batch: the experiment file and extra maes-batch arguments.
EXPERIMENT ?= experiments/robots_vs_time.yaml
BATCH_ARGS ?=

.PHONY: help run batch bench bench-full setup test build lint clean distclean constraints check-system \
	_setup _build

help:
	@echo "make setup        create or refresh the pip environment (.venv, stand-ins, install/)"
	@echo "make run          setup, then run maes_config.yaml on the embedded stack (CONFIG=...,"
	@echo "                  CONTROLLERS=builtin|none, RTF=2 (0 = as fast as possible), RUN_ARGS=...)"
	@echo "make test         setup, then run every test (PYTEST_ARGS='...' passes pytest arguments)"
	@echo "make batch        setup, then run an experiment (EXPERIMENT=..., BATCH_ARGS=...)"
	@echo "make bench        setup, then the quick benchmarks in bench/ (about 2 minutes)"
	@echo "make bench-full   every benchmark case (tens of minutes)"
	@echo "make build        rebuild the workspace with colcon"
	@echo "make lint         ruff check (pyproject.toml rules) and ruff format --check"
	@echo "make check-system check the system needs (Python 3.11 + headers, C/C++ compiler)"
	@echo "make clean        remove build outputs; make distclean also removes .venv"
	@echo "make constraints  regenerate requirements/constraints.txt (after editing venv.txt)"

setup:
	@$(LOCKED) $(MAKE) --no-print-directory _setup

_setup: $(WS_STAMP)
	@echo "[maes setup] environment up to date (.venv, .standins/install, install/)"

$(VENV_STAMP): $(VENV_INPUTS)
	scripts/setup_venv.sh

$(STANDINS_STAMP): $(VENV_STAMP) $(STANDINS_INPUTS)
	scripts/build_ws.sh standins

$(WS_STAMP): $(STANDINS_STAMP) $(WS_INPUTS)
	scripts/build_ws.sh workspace

check-system:
	@scripts/check_system.sh

run: setup
	@scripts/with_env python -m maes_bringup.embedded --config "$(CONFIG)" --controllers "$(CONTROLLERS)" \
		--real-time-factor "$(RTF)" $(RUN_ARGS)

batch: setup
	@scripts/with_env python -m maes_bringup.batch "$(EXPERIMENT)" $(BATCH_ARGS)

bench: setup
	@scripts/with_env python bench/run_all.py

bench-full: setup
	@scripts/with_env python bench/run_all.py --full

test: setup
	@scripts/with_env scripts/run_tests.sh $(PYTEST_ARGS)

build:
	@$(LOCKED) $(MAKE) --no-print-directory _build

_build: $(STANDINS_STAMP)
	scripts/build_ws.sh workspace

lint:
	@$(LOCKED) $(MAKE) --no-print-directory -s $(VENV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

constraints:
	@$(LOCKED) scripts/regenerate_constraints.sh

clean:
	rm -rf build install log .standins .pytest_cache .ruff_cache .hypothesis
	find src tests scripts -name __pycache__ -type d -prune -exec rm -rf {} + 2>/dev/null || true

distclean: clean
	rm -rf $(VENV)
