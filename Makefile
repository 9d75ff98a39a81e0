# gardener-node-agent — TypeScript on Bun. `make demo` and `make test` are all a fresh machine needs.
SHELL := /bin/bash
BUN := node_modules/.bin/bun
TSC := node_modules/.bin/tsc
ENTRY := src/cli/main.ts
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo v$$(sed -n 's/^  "version": "\(.*\)",/\1/p' package.json))
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# Measured in bench/startup.bench.ts (same-minute A/B, CPU time to /readyz): bytecode for every
# function (no --bytecode-depth) halves start-up CPU against top-level-only bytecode (38-50 ms vs
# 70-89 ms; nested functions were parsed and compiled on first call) for +4.3 MB of file and about
# the same idle RSS (+1.8 MB file-backed, -1.3 MB heap); the JIT policy keeps idle and peak RSS down:
# 100 (JSC's tier-up thresholds × 100) instead of 10 keeps an OSC apply's code out of the JIT, so the
# JIT compilers' code pages and the JIT's heap are not touched: fleet (20 agents × 60 s after one apply,
# two paired runs) 55.3 / 55.8 MB per agent instead of 58.9 / 59.4 (anonymous -0.7, file-backed -2.8);
# idle -0.9 MB (cold page cache); apply latency on a fresh ext4 (50 files / 1000 files) 38-53 / 158-287 ms
# against 41-51 / 188-311 ms: no cost visible on this loaded machine. The agent never reads .env or
# bunfig.toml from its working directory. dbus-next's optional transports are not used and break
# compiled binaries when bundled.
# BYTECODE_ORDER (recorded by bench/record-bytecode-order.ts) stores the bytecode a start uses at the
# front of the executable: -1.9 MB file-backed idle RSS, start-up CPU unchanged. Two profiles, most
# important first: a start without an OSC, then a start that applies one, so an idle agent's bytecode
# pages hold no apply-path functions (resident bytecode of an idle agent, binary's cache evicted before
# each start: 1.55 MB instead of 1.9-2.2).
# --splitting: every import() is a chunk of its own, so a start instantiates only the modules it
# reaches (45 of 86 chunks; `--version` 19) instead of the whole bundle's top-level scope. Same-minute
# interleaved A/B, 40 pairs, three times: spawn → /readyz -2.0 / -2.3 / -2.5 ms, agent CPU to ready
# -1 to -3 ms; idle RSS -0.5 to -0.8 MB (heap; file-backed equal when both binaries' pages are evicted
# before each start: file-backed RSS otherwise follows how the page cache holds the file, e.g. the same
# bytes as dist/ and as a cp of it: 41.6 vs 38.1 MB). Binary size unchanged. The recorded order still
# applies (functions are matched by a hash of their syntax; re-recording for this build measured the same).
# More import() cuts do not pay (issue 25, same-minute A/B, 3 rounds side by side): the OSC apply path
# (stage, gates, apply, record), drift repair, smol-toml and the in-place extension loaded on first use took
# the start from 441 to 399 modules and the idle JS heap down 136 KB, but idle RSS rose 49.6 -> 50.6 MB
# (anonymous -0.1, file-backed +1.1: more, smaller chunks, whose pages the start touches). Reverted.
# Runtime settings, measured one by one (issue 25; bench/runtime-settings-ab.ts, variants side by side in
# one sandbox each, 2 rounds, load 3-50; idle RSS / RSS 20 s after the demo OSC's apply / VmHWM after two
# 1000-file applies; the base build: 54.0 / 62.0 / 91.7 MB) — none is kept:
# - --smol (--compile-exec-argv=--smol; the pinned Bun puts it in process.execArgv): 53.9 / 62.2 / 91.8.
# - MIMALLOC_PURGE_DELAY=0: 54.0 / 62.1 / 90.0; MIMALLOC_ARENA_EAGER_COMMIT=0: 53.9 / 61.9 / 93.7;
#   MIMALLOC_PAGE_COMMIT_ON_DEMAND=1: 54.0 / 62.1 / 92.5; MIMALLOC_PAGE_FULL_RETAIN=0: 54.3 / 61.9 / 92.5.
#   mimalloc reads them once at process start, before any of our code: only a re-exec or the unit's
#   Environment= (gardenlet's text) could set them, and none moves a figure by more than 2 MB.
# - BUN_JSC_useJIT=0: 51.4 / 57.8 / 70.0; BUN_JSC_forceRAMSize=64 MiB: 54.4 / 61.2 / 82.1;
#   BUN_JSC_numberOfGCMarkers=1 + useConcurrentGC=0: 53.4 / 61.5 / 92.5. JSC reads its options when the
#   VM is made, before any of our code runs: environment only, so the same as mimalloc's.
# - What the binary can set: the JIT policy (--compile-jit-policy, Bun.unsafe.setJITPolicy). 1000:
#   54.1 / 61.9 / 83.1; 100000: 54.0 / 61.8 / 81.6 (-10 MB peak: the apply loops stay in the interpreter;
#   VmHWM over nine 50-file applies 63.8 instead of 71.0), but user CPU per 1000-file apply (/proc stat,
#   6 applies, 2-3 interleaved runs) 143-153 ms (1000) and 160-172 ms (100000) against 127-140 ms, and
#   that apply's latency target (≤ 1.3 × floor) counts it.
#   Rejected as a trade of one target for another; 100 stays (reasons above).
# - A full collection after every apply (not only ≥ 250 files): RSS after the demo apply 62.0 (same):
#   what an apply leaves is code and module state, not garbage.
BYTECODE_ORDER := bench/bytecode-order-start.txt bench/bytecode-order.txt
BUILD_FLAGS := --compile --splitting --minify --sourcemap=none \
	--bytecode --format=esm --compile-jit-policy=100 $(addprefix --bytecode-order=,$(BYTECODE_ORDER)) \
	--no-compile-autoload-dotenv --no-compile-autoload-bunfig \
	--define 'GNA_BUILD_VERSION="$(VERSION)"' --define 'GNA_BUILD_REVISION="$(REVISION)"' \
	-e x11 -e usocket

.PHONY: all deps host-deps host-deps-e2e build build-all typecheck lint checks test test-long bench demo e2e oci push clean

# Debian packages the tests and the demo start for real (command:package), installed when missing.
HOST_DEPS := dbus-daemon:dbus docker-registry:docker-registry socat:socat openssl:openssl mkfs.ext4:e2fsprogs \
	systemctl:systemd zstd:zstd curl:curl containerd:containerd ctr:containerd systemd-journal-remote:systemd-journal-remote
E2E_DEPS := qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils debootstrap:debootstrap \
	cloud-localds:cloud-image-utils jq:jq

all: build

node_modules/.installed: package.json
	npm install --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

host-deps:
	@bash test/host-deps.sh $(HOST_DEPS)

host-deps-e2e: host-deps
	@bash test/host-deps.sh $(E2E_DEPS)

# On node_modules/.installed, not the phony `deps`: with that the binary was rebuilt on every `make test`
# even when nothing it is built from had changed.
dist/gardener-node-agent: node_modules/.installed $(shell find src -name '*.ts' 2>/dev/null) package.json $(BYTECODE_ORDER)
	@mkdir -p dist
	$(BUN) build $(BUILD_FLAGS) --target=bun-linux-x64 $(ENTRY) --outfile $@

build: dist/gardener-node-agent

build-all: deps
	@mkdir -p dist
	$(BUN) build $(BUILD_FLAGS) --target=bun-linux-x64 $(ENTRY) --outfile dist/gardener-node-agent-linux-amd64
	$(BUN) build $(BUILD_FLAGS) --target=bun-linux-arm64 $(ENTRY) --outfile dist/gardener-node-agent-linux-arm64

# Incremental: what tsc learnt in the last run (dist/tsconfig.tsbuildinfo) spares re-checking unchanged
# files. Measured one after the other (load 8-13): full 35.7 CPU-s (65.8 s wall); incremental with nothing
# changed 9.8 CPU-s (8.1 s), after a one-line change to a source file 16.5 CPU-s (11.6 s); the first run
# without the file 39.3 CPU-s.
typecheck: deps
	@mkdir -p dist
	$(TSC) --noEmit --incremental --tsBuildInfoFile dist/tsconfig.tsbuildinfo

BIOME := node_modules/.bin/biome
KNIP := node_modules/.bin/knip
DEPCRUISE := node_modules/.bin/depcruise

# Lint (biome's recommended rules, see biome.json; a warning fails too), unused files/exports/dependencies
# (knip; entry points and the reason for each setting in knip.jsonc) and the formatting check (biome
# format; `npm run format` rewrites).
# Biome was chosen by measurement: `biome check` on this tree takes 1.5 s CPU and 95 MB against eslint
# (typescript-eslint recommended) 12.5 s and 420 MB plus prettier --check 11.8 s and 180 MB.
# Cost in `make test`, measured 2026-11-26: biome lint 1.5 s CPU / 105 MB, knip 3.0 s / 175 MB, biome
# format 0.9 s / 80 MB; about 5 s CPU in all, a few seconds of wall time beside the build.
# Import rules (dependency-cruiser, rules and reasons in .dependency-cruiser.cjs): no import cycle in src/,
# controllers and OSC features apart, the OSC room's stage order (osc-pipeline.md 3.4). Dev-only, nothing
# of it ships: 2.1-2.4 s wall, 2.9 s CPU, 225 MB peak (measured 2026-11-28, 572 modules).
lint: deps
	$(BIOME) lint --error-on-warnings --max-diagnostics=50 .
	$(KNIP) --no-progress
	$(DEPCRUISE) src --config .dependency-cruiser.cjs --output-type err
	$(BIOME) format --max-diagnostics=20 .

# Build, typecheck and lint side by side (whole-binary tests use dist/gardener-node-agent); the tests
# wait for all three.
checks: deps
	@$(MAKE) --no-print-directory -j3 --output-sync=target build typecheck lint

# The test files run in TEST_WORKERS processes at once (`bun test --parallel`, each file in a fresh
# global): most of a whole-binary test's time is waiting on agents and simulators, not CPU, so more
# workers than cores pays (measured on 2 cores: 6 workers). Every file starts and stops its own
# simulators, doubles and agents on ports from reservePort() and paths under its own temp dirs.
# --timings starts the slowest files first, from the durations of the last run (seeded from
# test/timings.json), and the ten slowest files are printed at the end. Files named *.long.test.ts
# hold the tests that need minutes of real time to mean anything: `make test-long` (README "Tests").
TEST_WORKERS ?= 6
TEST_TIMINGS := dist/test-timings.json
LONG_TESTS := .long.test.ts
TEST_FLAGS = --timeout 60000 --parallel=$(TEST_WORKERS) --timings=$(TEST_TIMINGS) --update-timings

$(TEST_TIMINGS): test/timings.json
	@mkdir -p dist
	cp test/timings.json $@

# The tests' temporary roots, simulators' and doubles' files live in a directory of their own on tmpfs
# (/dev/shm), removed after the run: every apply in a test ends in fsync/syncfs, which on the disk's file
# system waits for whatever else is being written there (other tests, other work on the machine); nothing
# in the suites is about durability across power loss. Tests that need a particular file system make it
# themselves (bootstrap's mkfs.ext4 image); chattr flags work on tmpfs as on ext4 (Linux >= 6.0).
# Measured (osc-controller.test.ts alone, alternating, load 7-10): 72.5 / 13.8 s wall and 27.9 / 13.6 CPU-s
# with /tmp against 10.0 / 6.6 s and 8.9 / 8.6 CPU-s; the whole make test under the measure lock (with the
# binary no longer rebuilt each time) 153.9 s / 38 s system CPU against 168.1 s / 52 s.
TEST_TMP_PARENT ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp})
TEST_RUN = tmp=$$(mktemp -d $(TEST_TMP_PARENT)/gna-test-XXXXXX) || exit 1; status=0; TMPDIR=$$tmp $(BUN) test $(TEST_FLAGS)

test: deps host-deps checks $(TEST_TIMINGS)
	@$(TEST_RUN) --path-ignore-patterns='**/*$(LONG_TESTS)' || status=$$?; rm -rf "$$tmp"; \
	$(BUN) run test/slowest.ts $(TEST_TIMINGS) --except $(LONG_TESTS); exit $$status

test-long: deps host-deps build $(TEST_TIMINGS)
	@$(TEST_RUN) $(LONG_TESTS) || status=$$?; rm -rf "$$tmp"; \
	$(BUN) run test/slowest.ts $(TEST_TIMINGS) --only $(LONG_TESTS); exit $$status

bench: deps host-deps build oci
	$(BUN) run bench/run.ts

demo: deps host-deps build
	$(BUN) run test/demo/demo.ts

e2e: deps host-deps-e2e build-all oci
	bash test/e2e/run.sh

oci: build-all
	$(BUN) run oci/build.ts --version $(VERSION) --revision $(REVISION)

push: oci
	COSIGN_KEY=$(COSIGN_KEY) $(BUN) run oci/push.ts dist/oci $(REGISTRY)

clean:
	rm -rf dist
