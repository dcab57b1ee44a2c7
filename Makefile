# tickemu: every target needs only Go (and gcc for -race; the tests also headless
# Chromium, which `make test` installs itself); modules come from the
# Go module proxy. `make run` and `make test` are the two set-up commands
# (quick: no PGO, no race detector); `make ci` runs everything.

GO      ?= go
BIN     := bin/tickemu
CONFIG  ?= configs/default.hcl
PKGS    := ./...
BENCHTIME ?= 1x
# The CPU profile the shipped binary and the benchmarks are built with
# (profile-guided optimisation); `make pgo` rebuilds it. The tests build
# without it, so their build cache is the plain one.
PGO     := $(CURDIR)/cmd/tickemu/tickemu.pgo

# Every Go module in the repository besides the main one (each is vetted and
# tested on its own: `go test ./...` does not cross module boundaries).
MODULES := $(patsubst %/go.mod,%,$(wildcard examples/*/go.mod))

.PHONY: api-check api-baseline
.PHONY: capture
.PHONY: test-kernelshark
.PHONY: attack
.PHONY: all build run test test-full test-deps test-modules test-cluster bench pgo lint fmt-check tidy-check ci fuzz clean help calibration validation
.PHONY: profile kernel-oracle test-oracle kwheel python-governor hangcap-plugins

all: build

build: ## Build bin/tickemu (with the PGO profile).
	@echo "==> go build -pgo=cmd/tickemu/tickemu.pgo -o $(BIN) ./cmd/tickemu"
	$(GO) build -pgo=$(PGO) -o $(BIN) ./cmd/tickemu

# run builds bin/tickemu without the PGO profile: a newcomer's first
# command compiles the module once, in the build cache the tests share,
# instead of a second time with the profile (minutes on two cores); the
# profile makes the simulation a few per cent faster. `make build` is the
# shipped, profile-guided binary.
run: ## Build bin/tickemu (without PGO: quick) and run the default scenario (CONFIG=...).
	@echo "==> go build -o $(BIN) ./cmd/tickemu && $(BIN) run $(CONFIG)"
	$(GO) build -o $(BIN) ./cmd/tickemu
	./$(BIN) run $(CONFIG)

# test is the newcomer's test command: every package, shuffled, long
# suites reduced (-short), no race detector. test-full, which `make ci`
# runs, is every test twice: reduced (-short) with the race detector, which
# checks the concurrent code (compare's parallel runs, the plugin transport,
# signals and Ctrl-C) as well on a short run as on a long one, and in full
# without it, where the long simulations (the docs' figures, every seed and
# variant) take a tenth of the time; then the example modules. Both leave
# out go test's own vet pass (-vet=off): make lint runs go vet with every
# analyzer over the same packages and their tests (make ci runs it first),
# and the pass cost a cold make test about 20 s of CPU. The race pass sets
# GORACE=atexit_sleep_ms=0: a race-built process otherwise sleeps 1 s before
# it exits (to let racing goroutines be caught), and every testscript exec of
# tickemu and every plugin process it starts and stops one after another is
# one (cmd/tickemu/testdata/script/policy.txtar: its run with six plugin
# processes took 7.4 s, 0.4 s without).
# A race found before exit is still reported, and fails the test.
test: test-deps ## Run every test, shuffled, long suites reduced (-short), without the race detector; make test-full is everything.
	@echo "==> go test -short -shuffle=on -vet=off $(PKGS)"
	$(GO) test -short -shuffle=on -vet=off -timeout 10m $(PKGS)

test-full: test-deps ## Run every test reduced (-short) with the race detector, then in full without it, shuffled, and every example module's (part of make ci).
	@echo "==> GORACE=atexit_sleep_ms=0 go test -race -short -shuffle=on -vet=off $(PKGS)"
	GORACE=atexit_sleep_ms=0 $(GO) test -race -short -shuffle=on -vet=off -timeout 20m $(PKGS)
	@echo "==> go test -shuffle=on -vet=off $(PKGS) (every test in full, README's and docs' figures too)"
	$(GO) test -shuffle=on -vet=off -timeout 20m $(PKGS)
	$(MAKE) test-modules

test-deps: ## Install what the tests need beyond Go: headless Chromium for the HTML report tests (framework/report's drive it through chromedp, no chromedriver), Debian's python3-grpcio and python3-grpc-tools for the Python example plugins, node and npm for the TypeScript one.
	bash scripts/install-test-deps.sh
	bash scripts/install-python-plugin-deps.sh
	bash scripts/install-node-plugin-deps.sh

# The KernelShark test needs an X server (Xvfb) and takes about 20 s, so it
# builds only with the tag kernelshark and runs here and in ci, not in test.
test-kernelshark: test-deps ## Open a tickemu trace.dat in Debian's KernelShark under Xvfb and check its window (screenshot: test-artifacts/kernelshark.png).
	@echo "==> go vet -tags kernelshark ./cmd/tickemu && go test -tags kernelshark -run '^TestKernelShark$$' ./cmd/tickemu"
	$(GO) vet -tags kernelshark ./cmd/tickemu
	$(GO) test -tags kernelshark -count=1 -run '^TestKernelShark$$' ./cmd/tickemu

test-modules: ## Vet and test every module under examples/.
	@for m in $(MODULES); do \
		echo "==> (cd $$m && go vet ./... && go test ./...)"; \
		(cd $$m && $(GO) vet ./... && $(GO) test -timeout 10m ./...) || exit 1; \
	done

test-cluster: build ## Install Slurm (Debian packages, as root) if missing, start a one-node cluster, run a sharded comparison there and check it equals the local one.
	@echo "==> bash scripts/test-cluster.sh"
	bash scripts/test-cluster.sh

bench: ## Engine and transport benchmarks (simulated expiries per wall second), built as the shipped binary is (PGO).
	@echo "==> go test -pgo=cmd/tickemu/tickemu.pgo -run '^$$' -bench . ./cmd/tickemu ./framework/... ./plugins/..."
	$(GO) test -pgo=$(PGO) -run '^$$' -bench . -benchmem ./cmd/tickemu ./framework/... ./plugins/...

pgo: ## Rebuild cmd/tickemu/tickemu.pgo: CPU profiles of every shipped scenario and of BenchmarkEngine64.
	bash scripts/pgo.sh

lint: ## go vet and staticcheck (pinned in tools/go.mod).
	@echo "==> go vet ./... && staticcheck ./..."
	$(GO) vet ./...
	$(GO) tool -modfile=tools/go.mod staticcheck ./...

fmt-check: ## Fail if any Go file is not gofmt-formatted.
	@echo "==> gofmt -l ."
	@out=$$(gofmt -l .); test -z "$$out" || { echo "$$out"; echo "not gofmt-formatted: run 'gofmt -w .'" >&2; exit 1; }

tidy-check: ## Fail if go.mod or go.sum of any module (main, tools, examples) is not tidy.
	@for m in . tools $(MODULES); do \
		echo "==> (cd $$m && go mod tidy -diff)"; \
		(cd $$m && $(GO) mod tidy -diff) || { echo "$$m: run 'go mod tidy' there" >&2; exit 1; }; \
	done

# ci is what .ci/run calls on a fresh clone: every check the repository has.
# verify-generate runs first, while the work tree is still clean.
ci: verify-generate fmt-check tidy-check lint lint-proto test-full test-kernelshark attack ## Everything CI checks.
	@if grep -q '^api-check:' $(MAKEFILE_LIST); then $(MAKE) api-check; fi

# attack keeps issue 31's attack on the landed code as regression tests: every
# case of its list, named Attack (or the emitters' hostile-name corpus, the
# lying plugins of framework/contract, the seeds of the fuzz targets that
# found bugs), and the CLI cases as testscripts attack_*.txtar.
ATTACK_RUN  := Attack|TestEmittersResistInjection|FuzzEmitters|TestViolations|FuzzSafe
ATTACK_PKGS := ./framework/cluster ./framework/contract ./framework/experiment ./framework/cli ./framework/logging \
	./framework/termtext ./framework/internal/limitio ./framework/internal/outfile
attack: ## Issue 31's attack as regression tests: injection, endless input, outputs, hung/lying plugins, escapes, absurd values (well under a minute).
	@echo "==> go test -count=1 -run '$(ATTACK_RUN)' $(ATTACK_PKGS) && go test -count=1 -run 'TestScripts/attack_' ./cmd/tickemu"
	$(GO) test -count=1 -run '$(ATTACK_RUN)' $(ATTACK_PKGS)
	$(GO) test -count=1 -run 'TestScripts/attack_' ./cmd/tickemu

fuzz: ## Run every fuzz target for FUZZTIME (default 20s), one after another; FUZZFLAGS adds flags (FUZZFLAGS=-parallel=1 on a shared machine).
	@echo "==> fuzzing (each target $${FUZZTIME:-20s})"
	@targets=$$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz'); \
	test -n "$$targets" || { echo "no fuzz targets found" >&2; exit 1; }; \
	for t in $$targets; do \
		pkg=$$(grep -rl --include='*_test.go' "^func $$t(" . | head -1 | xargs dirname); \
		echo "--> $$pkg $$t"; \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $${FUZZTIME:-20s} $(FUZZFLAGS) $$pkg || exit 1; \
	done

api-check: ## Fail if framework/sdk changed incompatibly since the baseline commit (last change of api/sdk/BASELINE) without a protocol version change.
	@echo "==> make/api.sh check"
	GO=$(GO) bash make/api.sh check

api-baseline: ## Rewrite api/sdk/BASELINE in the commit that bumps sdk.ProtocolVersion.
	GO=$(GO) bash make/api.sh baseline

capture: build ## Re-record the real-kernel agreement suite into validation/captures/ (NAME.tcap) (root, tracefs; installs cyclictest and stress-ng). docs/capture.md
	@echo "==> bash scripts/capture-suite.sh"
	TICKEMU=$(BIN) bash scripts/capture-suite.sh

calibration: ## Regenerate docs/calibration.md: each headline figure at half and double its cost constants.
	@echo "==> go run ./internal/calibrate > docs/calibration.md"
	t=$$(mktemp) && $(GO) run ./internal/calibrate > $$t && cat $$t > docs/calibration.md && rm $$t

profile: build ## Refit profiles/kvm-guest.hcl, the machine profile of the agreement suite's machine, from validation/captures/*.tcap (tickemu calibrate, docs/calibration-fit.md).
	@echo "==> $(BIN) calibrate validation/captures/*.tcap --out profiles/kvm-guest.hcl"
	./$(BIN) calibrate validation/captures/*.tcap --out profiles/kvm-guest.hcl

# validation runs every bundle of the suite on the model (tickemu check): the
# real traces are scored too, a few seconds a bundle, so it is not part of
# verify-generate. VALIDATION_FLAGS are the generator's flags: by default
# the model runs with the suite machine's profile.
VALIDATION_FLAGS ?= -profile profiles/kvm-guest.hcl
validation: ## Regenerate docs/validation.md: the model against the real kernel for every bundle of validation/captures/ (tickemu check), with tolerances, noise and validation/reasons.txt.
	@echo "==> go run ./internal/validation $(VALIDATION_FLAGS) > docs/validation.md"
	t=$$(mktemp) && $(GO) run ./internal/validation $(VALIDATION_FLAGS) > $$t && cat $$t > docs/validation.md && rm $$t

kernel-oracle: ## Build the kernel oracle: kernel/time/timer.c of linux-source-6.12 (or KERNEL_SRC=DIR) as bin/oracle/libktimer-oracle.so, reused while unchanged (docs/kernel-oracle.md).
	@echo "==> bash scripts/kernel-oracle.sh"
	bash scripts/kernel-oracle.sh

# The oracle's packages (oracle/...) build only with the build tag
# kernel_oracle: without it they are a package comment, so ./... needs
# neither cgo nor the library; with it their tests fail, naming
# `make kernel-oracle`, when the library is missing.
ORACLE_SEQS ?= 500
test-oracle: kernel-oracle ## Differential tests: random operation sequences through the kernel's timer.c and plugins/wheel at its release (ORACLE_SEQS x 2000 operations).
	@echo "==> go vet -tags kernel_oracle ./oracle/... && staticcheck -tags kernel_oracle ./oracle/... && go test -tags kernel_oracle -v ./oracle/wheeldiff -args -seqs $(ORACLE_SEQS) && go test -tags kernel_oracle -v ./oracle/kwheel"
	$(GO) vet -tags kernel_oracle ./oracle/...
	$(GO) tool -modfile=tools/go.mod staticcheck -tags kernel_oracle ./oracle/...
	$(GO) test -tags kernel_oracle -count=1 -timeout 15m -v ./oracle/wheeldiff -args -seqs $(ORACLE_SEQS)
	$(GO) test -tags kernel_oracle -count=1 -timeout 5m -v ./oracle/kwheel

kwheel: kernel-oracle ## Build bin/plugins/tickemu-plugin-kwheel: the kernel oracle served as the wheel plugin "kwheel", out of process (docs/kernel-oracle.md).
	@echo "==> go build -tags kernel_oracle -o bin/plugins/ ./oracle/cmd/tickemu-plugin-kwheel"
	$(GO) build -tags kernel_oracle -o bin/plugins/ ./oracle/cmd/tickemu-plugin-kwheel

python-governor: ## Build bin/plugins/python/tickemu-plugin-pygov: the Python example governor with its stubs generated from api/proto (examples/python-governor).
	bash scripts/install-python-plugin-deps.sh
	bash scripts/build-python-governor.sh bin/plugins/python

hangcap-plugins: ## Build the hang_cap policy out of process in Go, Python and TypeScript: bin/plugins/{go,python,node}-hangcap/tickemu-plugin-hang_cap (examples/hangcap).
	$(GO) build -o bin/plugins/go-hangcap/ ./examples/hangcap/cmd/tickemu-plugin-hang_cap
	bash scripts/install-python-plugin-deps.sh
	bash scripts/build-python-hangcap.sh bin/plugins/python-hangcap
	bash scripts/install-node-plugin-deps.sh
	bash scripts/build-node-hangcap.sh bin/plugins/node-hangcap

clean: ## Remove build output.
	rm -rf bin

help: ## List targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

include make/generate.mk
