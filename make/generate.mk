# make/generate.mk: code generation for tickemu, included by the main Makefile.
#
# Everything runs through Go: buf, protoc-gen-go and protoc-gen-go-grpc are
# pinned by `tool` directives in tools/go.mod and run with `go tool`, so
# regenerating needs only the Go toolchain and the Go module proxy (no protoc
# download). Generated code is committed; users and plugin authors never run this.

PB_DIR    := framework/internal/pb
TOOLS_MOD := $(CURDIR)/tools/go.mod
# buf runs from $(PB_DIR) (its module root) and reads its pinned version from
# tools/go.mod through -modfile; buf.gen.yaml runs the protoc plugins with
# `go tool` in tools/ (buf.gen.yaml gives it relative to $(PB_DIR)),
# also pinned there.
BUF       := go tool -modfile=$(TOOLS_MOD) buf

.PHONY: generate generate-proto lint-proto verify-generate

generate: generate-proto ## Regenerate all generated code.
	@echo "==> go generate ./..."
	go generate ./...

generate-proto: ## Regenerate the plugin protocol's Go code.
	@echo "==> buf generate ($(PB_DIR))"
	find $(PB_DIR) -name '*.pb.go' -delete
	cd $(PB_DIR) && $(BUF) generate

lint-proto: ## Lint the .proto files (buf STANDARD rules).
	@echo "==> buf lint ($(PB_DIR))"
	cd $(PB_DIR) && $(BUF) lint

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
