# MAES-ROS: set up the pip environment, build, test, lint.
#
#   make setup   create what is missing: .venv (ROS 2 Jazzy wheels), the interface
#                stand-ins, the workspace in install/, ROS 2's launch stack and `ros2` CLI
#                (.ros-launch/) and nav2_simple_commander: those two from optional wheels folders
#                where they exist, else from upstream sources pinned by tag
#                (requirements/launch-sources.txt). Idempotent: with nothing to do it takes seconds.
#   make test    setup, then pytest over every package but the long end-to-end runs (marked
#                slow; PYTEST_ARGS="..." to pass arguments); make test-slow runs those
#   make test-image  the Docker image's Python side: the core's tests under the image's Python
#                (3.12) with the versions of requirements/image.txt, in .venv-image (CI runs it)
#   make build   rebuild the workspace (colcon) even if nothing seems changed
#   make lint    ruff check and ruff format --check over the repository
#   make clean   remove build outputs (build/ install/ log/ .standins/ .ros-launch/), keep the venvs
#   make distclean   clean, and remove the venvs too
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
KERNELS_STAMP := install/.maes-kernels-ok
IMAGE_VENV := .venv-image
IMAGE_VENV_STAMP := $(IMAGE_VENV)/.maes-venv-ok

# ROS 2 launch and the `ros2` CLI, and nav2_simple_commander: wheels beside the project on
# developer and CI machines (not on PyPI), else the upstream sources pinned by tag in
# requirements/launch-sources.txt. Which stamp setup makes depends on whether the folder holds
# wheels, so a folder that appears (or goes) later is noticed by the next `make setup`; where
# neither wheels nor network are there, setup says so once. MAES_LAUNCH_WHEELS=/path and
# MAES_NAV2_COMMANDER_WHEELS=/path (environment or make argument) point elsewhere.
MAES_LAUNCH_WHEELS ?= $(abspath $(CURDIR)/../shared/wheels/ros-jazzy-launch)
MAES_NAV2_COMMANDER_WHEELS ?= $(abspath $(CURDIR)/../shared/wheels/nav2-simple-commander)
export MAES_LAUNCH_WHEELS MAES_NAV2_COMMANDER_WHEELS
PINNED_SOURCES := requirements/launch-sources.txt scripts/upstream_sources.py
LAUNCH_INPUTS := $(wildcard $(MAES_LAUNCH_WHEELS)/*.whl)
ifneq ($(LAUNCH_INPUTS),)
LAUNCH_STAMP := .ros-launch/install/.maes-launch-ok
LAUNCH_INPUTS += $(shell find $(MAES_LAUNCH_WHEELS)/src -type f 2>/dev/null)
else
LAUNCH_STAMP := .ros-launch/.maes-launch-sources
LAUNCH_INPUTS += $(PINNED_SOURCES)
endif
LAUNCH_INPUTS += requirements/launch.txt requirements/constraints.txt scripts/setup_launch.sh \
	scripts/build_ws.sh
COMMANDER_INPUTS := $(wildcard $(MAES_NAV2_COMMANDER_WHEELS)/nav2_simple_commander-*.whl)
ifneq ($(COMMANDER_INPUTS),)
COMMANDER_STAMP := .ros-launch/.maes-commander-wheel
else
COMMANDER_STAMP := .ros-launch/.maes-commander-sources
COMMANDER_INPUTS += $(PINNED_SOURCES)
endif
COMMANDER_INPUTS += scripts/setup_commander.sh
VENV_INPUTS := requirements/venv.txt requirements/constraints.txt \
	scripts/setup_venv.sh scripts/patch_ros_cmake.py
IMAGE_VENV_INPUTS := requirements/image.txt requirements/image-test.txt \
	requirements/constraints.txt scripts/setup_image_venv.sh scripts/lib.sh
STANDINS_INPUTS := $(shell find standins -type f -not -name COLCON_IGNORE 2>/dev/null) \
	scripts/build_ws.sh scripts/unity_build.cmake scripts/build_cache.py
# What a colcon rebuild depends on. Python modules are not listed: --symlink-install makes
# edits (and new modules) visible without a rebuild.
WS_INPUTS := $(shell find src \( -name test -o -name __pycache__ \) -prune -o -type f \( \
	-name package.xml -o -name setup.py -o -name setup.cfg -o -name CMakeLists.txt \
	-o -name '*.msg' -o -name '*.srv' -o -name '*.action' -o -path '*/resource/*' \
	-o -path '*/launch/*' -o -path '*/config/*' -o -path '*/params/*' -o -path '*/rviz/*' \
	\) -print 2>/dev/null) scripts/build_ws.sh scripts/unity_build.cmake

# The modules that compile numba kernels: the kernels are compiled into the cache again when
# one of them changes (scripts/compile_kernels.py).
KERNELS_INPUTS := $(shell grep -rl --include='*.py' 'njit' src/maes_sim/maes_sim \
	src/maes_controller/maes_controller 2>/dev/null) src/maes_common/maes_common/jit.py \
	scripts/compile_kernels.py scripts/compile_kernels.sh

# Concurrent `make setup`s in one tree (several engineers, or two terminals) take turns: the
# second one re-checks the stamps after the first finished, and so does nothing.
SETUP_LOCK := /tmp/maes-ros-setup-$(shell printf '%s' "$(CURDIR)" | cksum | cut -d' ' -f1).lock
LOCKED := $(shell command -v flock >/dev/null 2>&1 && echo "flock $(SETUP_LOCK)")

# Setup steps run at once where one does not need the other (make -j); 1 runs them in turn.
SETUP_JOBS ?= 2
PYTEST_ARGS ?=
# make test-image: extra pytest arguments for the core's tests under the image's versions.
IMAGE_TEST_ARGS ?=
# make run: the run's config, whether the built-in controllers drive the robots (builtin|none),
# the real-time factor (0 = as fast as possible) and extra maes_run arguments.
CONFIG ?= maes_config.yaml
CONTROLLERS ?= builtin
RTF ?= 2
RUN_ARGS ?=
# make run: LOGIC=pkg.module:function or LOGIC=path/file.py:function runs that logic callback
# (e.g. LOGIC=maes_controller.logic:logic, the template you edit; docs/writing_logic.md).
LOGIC ?=
# make run: RECORD=run.mcap records the run (rosbag2's MCAP format); LIVE=1 serves a page to watch
# the run at http://127.0.0.1:$(LIVE_PORT)/ in a web browser, and Foxglove / Lichtblick on the same
# port (docs/watching.md, docs/live_view.md).
RECORD ?=
LIVE ?=
LIVE_PORT ?= 8765
# make run: DOMAIN=auto runs on a free ROS domain when another MAES-ROS run uses this one
# (DOMAIN=<n>: that domain; default ROS_DOMAIN_ID). docs/lockstep.md
DOMAIN ?=
# make batch: the experiment file and extra maes-batch arguments.
EXPERIMENT ?= experiments/robots_vs_time.yaml
BATCH_ARGS ?=

.PHONY: print-% help run batch bench bench-full bench-targets bench-irsim bench-stage fuzz setup setup-run test test-slow test-launch test-stress test-image build lint clean distclean \
	constraints check-system _setup _setup_run _build

help:
	@echo "make setup        create or refresh the pip environment (.venv, stand-ins, install/,"
	@echo "                  ros2 launch + CLI, nav2_simple_commander)"
	@echo "make run          set up what a run needs, then run maes_config.yaml on the embedded stack"
	@echo "                  (CONFIG=..., CONTROLLERS=builtin|none, RTF=2 (0 = as fast as possible),"
	@echo "                  RUN_ARGS=...)"
	@echo "                  LOGIC=maes_controller.logic:logic runs your logic (docs/writing_logic.md)"
	@echo "                  RECORD=run.mcap records it, LIVE=1: watch it in a web browser at"
	@echo "                  http://127.0.0.1:8765/ (LIVE_PORT=8765; Foxglove on the same port)"
	@echo "                  DOMAIN=auto: a free ROS domain if another MAES-ROS run uses this one"
	@echo "make test         setup, then run every test but the long end-to-end runs, in parallel"
	@echo "                  (PYTEST_ARGS='...' passes pytest arguments; MAES_TEST_JOBS=N workers)"
	@echo "make test-slow    the long end-to-end runs (pytest marker slow; CI runs both)"
	@echo "make test-launch  the tests that need ros2 launch or nav2_simple_commander (marker launch_stack)"
	@echo "make test-stress  the DDS and process tests STRESS_RUNS=10 times beside STRESS_BURNERS=2 busy loops"
	@echo "make test-image   the core's tests under the Docker image's Python versions"
	@echo "                  (requirements/image.txt; venv .venv-image; IMAGE_TEST_ARGS='...')"
	@echo "make batch        setup, then run an experiment (EXPERIMENT=..., BATCH_ARGS=...)"
	@echo "make bench        setup, then the quick benchmarks in bench/ (about 2 minutes)"
	@echo "make bench-full   every benchmark case (tens of minutes)"
	@echo "make bench-targets  issue 35's speed targets, one row each: met or not (~5 min;"
	@echo "                  TARGETS_ARGS='--rounds 3 --csv targets.csv')"
	@echo "make bench-irsim  the core against IR-SIM (PyPI) side by side; IR-SIM in its own venv"
	@echo "                  .venv-irsim, never the project's (IRSIM_ARGS=...; minutes)"
	@echo "make bench-stage  the core against Stage 4.3 side by side; Stage built from source"
	@echo "                  first (STAGE_PREFIX=...; bench/bench_stage.py says how; STAGE_ARGS=...)"
	@echo "make fuzz         setup, then fuzz configs, maps and commands (FUZZ_ARGS=...; minutes)"
	@echo "make build        rebuild the workspace with colcon"
	@echo "make lint         ruff check (pyproject.toml rules) and ruff format --check"
	@echo "make check-system check the system needs (Python 3.11 + headers, C/C++ compiler)"
	@echo "make clean        remove build outputs; make distclean also removes .venv"
	@echo "make constraints  regenerate requirements/constraints.txt (after editing venv.txt)"

setup:
	@$(LOCKED) $(MAKE) --no-print-directory -j$(SETUP_JOBS) _setup

_setup: $(KERNELS_STAMP) $(LAUNCH_STAMP) $(COMMANDER_STAMP)
	@echo "[maes setup] environment up to date (.venv, .standins/install, install/, .ros-launch/)"

# What a run needs: the venv, the stand-ins and the workspace (make run, make batch, make fuzz).
# ROS 2's launch stack, the ros2 CLI and nav2_simple_commander come with make setup (make test).
setup-run:
	@$(LOCKED) $(MAKE) --no-print-directory -j$(SETUP_JOBS) _setup_run

_setup_run: $(STANDINS_STAMP) $(KERNELS_STAMP)
	@$(if $(wildcard $(LAUNCH_STAMP)),true,echo "[maes setup] ready to run; 'make setup' adds ros2 launch and the ros2 CLI")

$(VENV_STAMP): $(VENV_INPUTS)
	scripts/setup_venv.sh

$(STANDINS_STAMP): $(VENV_STAMP) $(STANDINS_INPUTS)
	scripts/build_ws.sh standins

# The workspace needs none of the stand-ins to build (they are run-time dependencies), so with
# SETUP_JOBS=2 it and the numba kernels are built while the stand-ins' colcon build runs, whose
# code generators leave about half a core idle: the first `make run` is about 50 s sooner.
$(WS_STAMP): $(VENV_STAMP) $(WS_INPUTS)
	scripts/build_ws.sh workspace

$(KERNELS_STAMP): $(WS_STAMP) $(KERNELS_INPUTS)
	scripts/compile_kernels.sh

$(LAUNCH_STAMP): $(VENV_STAMP) $(LAUNCH_INPUTS)
	scripts/setup_launch.sh

# After the launch stack: both may unpack into .ros-launch/sources.
$(COMMANDER_STAMP): $(STANDINS_STAMP) $(LAUNCH_STAMP) $(COMMANDER_INPUTS)
	scripts/setup_commander.sh

# make print-LAUNCH_STAMP: a variable's value (the tests ask make which stamps setup makes).
print-%:
	@echo '$($*)'

check-system:
	@scripts/check_system.sh

run: setup-run
	@scripts/with_env python -m maes_bringup.runners.embedded --config "$(CONFIG)" --controllers "$(CONTROLLERS)" \
		--real-time-factor "$(RTF)" $(if $(LOGIC),--logic "$(LOGIC)") $(if $(RECORD),--record "$(RECORD)") \
		$(if $(filter-out 0 false no,$(LIVE)),--live "$(LIVE_PORT)") $(if $(DOMAIN),--domain "$(DOMAIN)") \
		$(RUN_ARGS)

batch: setup-run
	@scripts/with_env python -m maes_bringup.experiments.batch "$(EXPERIMENT)" $(BATCH_ARGS)

bench: setup
	@scripts/with_env python bench/run_all.py

bench-full: setup
	@scripts/with_env python bench/run_all.py --full

# Issue 35's speed targets on its own scenarios, one row each: met or not (about 5 minutes a round).
bench-targets: setup
	@scripts/with_env python bench/bench_targets.py $(TARGETS_ARGS)

# IR-SIM (bench/bench_irsim.py) lives in a venv of its own: it is no dependency of the project.
IRSIM_VENV := .venv-irsim
IRSIM_ARGS ?=

$(IRSIM_VENV)/.maes-venv-ok: requirements/bench-irsim.txt
	rm -rf $(IRSIM_VENV)
	$(PYTHON) -m venv $(IRSIM_VENV)
	$(IRSIM_VENV)/bin/pip install --quiet -r requirements/bench-irsim.txt
	touch $@

bench-irsim: setup $(IRSIM_VENV)/.maes-venv-ok
	@scripts/with_env python bench/bench_irsim.py --irsim-python $(IRSIM_VENV)/bin/python \
		$(IRSIM_ARGS)

STAGE_PREFIX ?= $(HOME)/stage/install
STAGE_ARGS ?= --robots 1 10 100 1000 --pin 1

bench-stage: setup
	@STAGE_PREFIX=$(STAGE_PREFIX) bench/stage/build.sh
	@STAGE_PREFIX=$(STAGE_PREFIX) scripts/with_env python bench/bench_stage.py $(STAGE_ARGS)

fuzz: setup-run
	@scripts/with_env python bench/fuzz_inputs.py $(FUZZ_ARGS)

test: setup
	@scripts/with_env scripts/run_tests.sh -m "not slow" $(PYTEST_ARGS)

test-slow: setup
	@scripts/with_env scripts/run_tests.sh -m slow $(PYTEST_ARGS)

# The tests that talk DDS or start processes (marker dds_or_process, not bench_smoke), STRESS_RUNS times in a row
# beside STRESS_BURNERS busy loops: flaky tests show up here (scripts/stress_tests.sh).
STRESS_RUNS ?= 10
STRESS_BURNERS ?= 2
test-stress: setup
	@scripts/with_env scripts/stress_tests.sh $(STRESS_RUNS) $(STRESS_BURNERS) $(PYTEST_ARGS)

# The tests that need ROS 2's launch stack or nav2_simple_commander (marker launch_stack, fast
# and slow): what the wheels folders change (CI's second pass).
test-launch: setup
	@scripts/with_env scripts/run_tests.sh -m launch_stack $(PYTEST_ARGS)

$(IMAGE_VENV_STAMP): $(IMAGE_VENV_INPUTS)
	scripts/setup_image_venv.sh

# Not the pip environment: only the image's packages and the simulator's source (the core's tests
# need no ROS), whatever PYTHONPATH the calling shell has (scripts/env.sh sets one for 3.11).
IMAGE_ENV := env -u PYTHONHOME PYTHONPATH="$(CURDIR)/src/maes_sim:$(CURDIR)/src/maes_common"

test-image:
	@$(LOCKED) $(MAKE) --no-print-directory -s $(IMAGE_VENV_STAMP)
	@$(IMAGE_ENV) $(IMAGE_VENV)/bin/python docker/check_python.py requirements/image.txt --maes
	@$(IMAGE_ENV) $(IMAGE_VENV)/bin/pytest src/maes_sim/test/core $(IMAGE_TEST_ARGS)

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
	rm -rf build install log .standins .ros-launch .pytest_cache .ruff_cache .hypothesis
	find src tests scripts -name __pycache__ -type d -prune -exec rm -rf {} + 2>/dev/null || true

distclean: clean
	rm -rf $(VENV) $(IMAGE_VENV) $(IRSIM_VENV)
