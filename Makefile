# agent: a Go skill host. `make help` lists the targets.
GO        ?= go
BIN       := bin/agent
PKGS      := ./...
FUZZTIME  ?= 30s
BENCHCOUNT ?= 6

BENCHSTAT          := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

.PHONY: help build test demo bench fuzz reliability proto lint clean

help: ## list targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/agent
	$(GO) build -trimpath -o $(BIN) ./cmd/agent

test: ## vet and run the whole test suite with the race detector
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

demo: ## install the bundled example skill from this repo's git history and use it
	bash examples/demo.sh

bench: ## run the benchmarks; benchstat prints medians (figures in docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./host/ ./plugins/exec/ ./plugins/base/ ./cmd/... ./internal/... | tee bench.out
	$(GO) run $(BENCHSTAT) bench.out

fuzz: ## run every fuzz target for FUZZTIME each; fails at the end if any target failed
	@failed=""; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || failed="$$failed $$pkg.$$t"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed (crashers are in the package's testdata/fuzz)"; exit 1; fi

reliability: ## fault, concurrency and hostile-input suite (docs/reliability.md)
	$(GO) test -tags reliability -count=1 -timeout 15m -run 'Reliability' -v $(PKGS) 2>&1 | tee reliability.out | grep -E '^(=== RUN|--- |PASS|FAIL|ok|RESULT)'

proto: ## regenerate proto/skill/v1 with pinned generators (needs protoc)
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=paths=source_relative \
	  --go-grpc_out=. --go-grpc_opt=paths=source_relative proto/skill/v1/skill.proto

lint: ## gofmt and vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)

clean: ## remove build output
	rm -rf bin bench.out reliability.out
