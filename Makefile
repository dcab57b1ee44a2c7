# tickemu: every target needs only Go (and gcc for -race); modules come from the
# Go module proxy. `make run` and `make test` are the two set-up commands.

GO      ?= go
BIN     := bin/tickemu
CONFIG  ?= configs/default.hcl
PKGS    := ./...
BENCHTIME ?= 1x

.PHONY: all build run test test-short bench lint fuzz clean help

all: build

build: ## Build bin/tickemu.
	@echo "==> go build -o $(BIN) ./cmd/tickemu"
	$(GO) build -o $(BIN) ./cmd/tickemu

run: build ## Build and run the default scenario (CONFIG=...).
	@echo "==> $(BIN) run $(CONFIG)"
	./$(BIN) run $(CONFIG)

test: ## Run every test with the race detector, in shuffled order (and the example plugin's).
	@echo "==> go test -race -shuffle=on $(PKGS)"
	$(GO) test -race -shuffle=on -timeout 20m $(PKGS)
	@echo "==> (cd examples/fixed && go test ./...)"
	cd examples/fixed && $(GO) test -timeout 10m ./...

test-short: ## Run the tests without the race detector.
	@echo "==> go test $(PKGS)"
	$(GO) test -timeout 20m $(PKGS)

bench: ## Engine and transport benchmarks (simulated expiries per wall second).
	@echo "==> go test -run '^$$' -bench . ./cmd/tickemu ./framework/... ./plugins/..."
	$(GO) test -run '^$$' -bench . -benchmem ./cmd/tickemu ./framework/... ./plugins/...

lint: ## go vet and staticcheck (pinned in tools/go.mod).
	@echo "==> go vet ./... && staticcheck ./..."
	$(GO) vet ./...
	$(GO) tool -modfile=tools/go.mod staticcheck ./...

fuzz: ## Run each fuzz target for FUZZTIME (default 20s).
	@echo "==> fuzzing"
	@for t in $$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz'); do \
		pkg=$$(grep -rl "func $$t(" --include='*_test.go' . | head -1 | xargs dirname); \
		echo "--> $$pkg $$t"; \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $${FUZZTIME:-20s} $$pkg || exit 1; \
	done

clean: ## Remove build output.
	rm -rf bin

help: ## List targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

include make/generate.mk
