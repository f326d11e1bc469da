# The two commands at the top of README.md:
#   make run   - the seed-000 comparison of every model the default board lists: its table,
#                plots and a verdict per metric beside the paper's TinyOS and MANTIS
#   make test  - every test: host unit tests (ASan+UBSan), the task migrator's Spin model, tooling tests,
#                emulator harness tests, tern-sim tests and target tests under QEMU / simavr
# Both install what they need first (Debian packages, a Python venv in .venv).

BOARD ?= mps2-an385
MODELS ?=# empty: every model the board lists (board.json)
VENV := .venv
PY := $(VENV)/bin/python
JOBS ?= $(shell nproc)

APT_PACKAGES := cmake ninja-build gcc pkg-config libcmocka-dev python3-venv \
	gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-system-arm \
	gcc-avr avr-libc binutils-avr simavr libsimavr-dev libelf-dev tshark \
	clang libclang-rt-14-dev iputils-ping spin

.PHONY: setup apt venv run test test-host test-spin test-fuzz fuzz test-tools test-harness test-sim test-target bench clean

setup: apt venv tools/simavr/build/tern-simavr tools/simavr/build/tern-sim

# Install only what is missing; needs root (or sudo) the first time.
apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: tools/requirements.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r tools/requirements.txt
	touch $@

tools/simavr/build/tern-simavr tools/simavr/build/tern-sim: $(wildcard tools/simavr/*.c tools/simavr/*.h tools/simavr/Makefile)
	$(MAKE) -C tools/simavr

# Seed 000's 50 sensing periods at every tree depth, with the short and the
# long sensing job (about a minute of runs on two cores).
run: setup
	./tern bench seed000 --board $(BOARD) $(if $(MODELS),--models $(MODELS)) --n 1,2,3,4,5,6,7,8 --ls 1,75 \
		--jobs $(JOBS) --json results/seed000-$(BOARD)-run.json --plots results/seed000-$(BOARD)-run --verdict

# The full sweep of seed 000 Table I with the report and plots.
bench: setup
	./tern bench seed000 --board $(BOARD) $(if $(MODELS),--models $(MODELS)) --jobs $(JOBS) \
		--json results/seed000-$(BOARD).json --plots results/seed000-$(BOARD) \
		--report results/seed000-$(BOARD).md

test: setup test-host test-spin test-fuzz test-tools test-harness test-sim test-target

test-host:
	cmake -S . -B build/host -G Ninja
	cmake --build build/host
	ctest --test-dir build/host --output-on-failure -j $(JOBS)

# The task migrator's Promela model (kernel/migrate.pml) checked with Spin:
# every interleaving of the protocol as built, and three seeded bugs that
# must be caught (docs/migration.md).
test-spin:
	tests/spin/run.sh build/spin

# Fuzzing (tests/fuzz, docs/reliability.md): libFuzzer with ASan+UBSan,
# clang; libclang-rt-14-dev holds libclang_rt.fuzzer. test-fuzz replays
# every regression input and runs FUZZ_RUNS inputs per target (seconds);
# fuzz runs each target FUZZ_SECONDS.
FUZZ_RUNS ?= 20000
FUZZ_SECONDS ?= 60

test-fuzz:
	tests/fuzz/run.sh test $(FUZZ_RUNS)

fuzz: apt
	tests/fuzz/run.sh fuzz $(FUZZ_SECONDS)

test-tools:
	$(PY) -m mypy --strict tools/terntools
	$(PY) -m pytest -q tools/tests

test-harness:
	$(PY) -m pytest -q tests/harness

test-sim:
	$(PY) -m pytest -q tests/sim

test-target:
	$(PY) -m pytest -q tests/target

clean:
	rm -rf build tools/simavr/build
