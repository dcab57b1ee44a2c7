# make/generate.mk: code generation for tickemu, included by the main Makefile.
#
# Everything runs through Go: buf, protoc-gen-go and protoc-gen-go-grpc are
# pinned by `tool` directives in tools/go.mod and run with `go tool`, so
# regenerating needs only the Go toolchain and the Go module proxy (no protoc
# download). Generated code is committed; users and plugin authors never run this.

# The .proto files are public (docs/protocol.md) and live in $(PROTO_DIR), a
# buf module; their Go code goes to $(PB_DIR), where the host imports it.
PROTO_DIR := api/proto
PB_DIR    := framework/sdk/internal/pb
TOOLS_MOD := $(CURDIR)/tools/go.mod
# buf runs from $(PROTO_DIR) (its module root) and reads its pinned version from
# tools/go.mod through -modfile; buf.gen.yaml runs the protoc plugins with
# `go tool` in tools/ (buf.gen.yaml gives it relative to $(PROTO_DIR)),
# also pinned there.
BUF       := go tool -modfile=$(TOOLS_MOD) buf

.PHONY: generate generate-proto lint-proto breaking-proto proto-baseline verify-generate

generate: generate-proto ## Regenerate all generated code.
	@echo "==> go generate ./..."
	go generate ./...

generate-proto: ## Regenerate the plugin protocol's Go code.
	@echo "==> buf generate ($(PROTO_DIR) -> $(PB_DIR))"
	find $(PB_DIR) -name '*.pb.go' -delete
	cd $(PROTO_DIR) && $(BUF) generate

lint-proto: breaking-proto ## Lint the .proto files (buf STANDARD rules) and check them against the baseline.
	@echo "==> buf lint ($(PROTO_DIR))"
	cd $(PROTO_DIR) && $(BUF) lint

# The baseline is a committed buf image (JSON, without source info) of the
# protocol as plugins in other languages were built against it. A change that
# would break such a plugin on the wire or in JSON (buf's WIRE_JSON rules:
# a renumbered or retyped field, a removed message, service or RPC) fails
# here; it belongs in a new package, tickemu.plugin.v3, with a new
# sdk.ProtocolVersion. A compatible addition passes; run proto-baseline in
# the commit that adds it so the next change is checked against it too.
# A file baseline rather than `.git#branch=main`: it works in shallow clones,
# git worktrees and tarballs alike, and the diff of the baseline shows what a
# protocol change added.
PROTO_BASELINE := $(PROTO_DIR)/baseline.json

breaking-proto: ## Fail if the .proto files break the committed baseline (api/proto/baseline.json).
	@echo "==> buf breaking ($(PROTO_DIR) against $(PROTO_BASELINE))"
	cd $(PROTO_DIR) && $(BUF) breaking --against baseline.json

proto-baseline: ## Rewrite api/proto/baseline.json from the .proto files (after a compatible addition).
	cd $(PROTO_DIR) && $(BUF) build --exclude-source-info -o baseline.json
	@echo "wrote $(PROTO_BASELINE): commit it with the .proto change"

# verify-generate expects a clean work tree (CI): any difference after
# regenerating means someone edited a .proto or a generator pin without
# regenerating (etcd-io/raft:scripts/verify_genproto.sh does the same).
verify-generate: generate ## Fail if generated code differs from what is committed.
	@echo "==> checking that generated code is up to date"
	@git diff --exit-code || \
		{ echo "generated code is stale: run 'make generate' and commit the result" >&2; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- $(PB_DIR))" || \
		{ git status --porcelain --untracked-files=all -- $(PB_DIR) >&2; \
		  echo "untracked generated files: run 'make generate' and commit the result" >&2; exit 1; }
