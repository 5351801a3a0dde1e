# agent: a Go skill host. `make help` lists the targets.
GO        ?= go
BIN       := bin/agent
# sdk and proto are modules of their own (go.work joins them for development).
PKGS      := ./... ./sdk/... ./proto/... ./examples/skills/hello-extended/plugin/...
MOD       := github.com/agentskills/agent
# Plugin modules that require the SDK like any author's (make generate pins them).
EXAMPLES  := examples/skills/hello-extended/plugin
FUZZTIME  ?= 30s
# fuzz workers per target (the machine is shared; raise it on your own)
FUZZPAR   ?= 1
BENCHCOUNT ?= 6
# A -race binary sleeps 1 s before it exits (the race runtime's
# atexit_sleep_ms), and the tests start thousands of agent and plugin
# processes: that sleep was most of the suite's wall time (docs/development.md).
export GORACE ?= atexit_sleep_ms=0
# Parallel tests per package: most wait on processes, git and fsync, not on
# the CPU (the cli package used 0.76 of 2 cores at the default of 2).
TESTPAR   ?= 4
# -trimpath keeps the clone's folder out of the build cache's keys, so a
# fresh clone in another folder (CI's) reuses what an earlier one compiled.
CACHEFLAGS := -trimpath

BENCHSTAT          := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

# Release and cross-build targets (SPEC §8 "Other systems").
PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 windows/amd64
# Module folders that make cross vets and builds, each inside itself.
MODULES   := . sdk proto $(EXAMPLES)
VERSION   ?= $(shell sed -n 's/^var Version = "\(.*\)"/\1/p' cmd/agent/internal/cli/version.go)
# The commit comes from git itself: these machines set GOFLAGS=-buildvcs=false,
# so go build records none.
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DIST      ?= dist
STAMP     := -X $(MOD)/cmd/agent/internal/cli.Version=$(VERSION) -X $(MOD)/cmd/agent/internal/cli.Commit=$(COMMIT)
LDFLAGS   := -s -w $(STAMP)

.PHONY: help build jaeger test test-vet test-race test-portable reliability-portable cross release demo bench fuzz reliability proto lint clean tidy generate

help: ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/agent, stamped with version and commit (BIN=path puts it elsewhere)
	$(GO) build -trimpath -ldflags "$(STAMP)" -o $(BIN) ./cmd/agent

# Jaeger, the trace backend the tracing tests read spans back from
# (cmd/agent/internal/cli/jaeger_linux_test.go), built once into a cache
# outside the clone. `go install .../cmd/jaeger@VERSION` refuses it (its
# go.mod has a replace directive), so it is built inside its own module
# folder; the module cache is read-only, hence the copy. Cold, this downloads
# about 1 GB of modules.
JAEGER_VERSION := v1.76.0
JAEGER ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agent-ci/jaeger-$(JAEGER_VERSION)

jaeger: ## build Jaeger v1.76.0, the backend TestJaeger reads traces from, once into ~/.cache/agent-ci (AGENT_JAEGER names another)
	@if [ -x "$(JAEGER)" ]; then echo "$(JAEGER) is there"; else \
	  set -e; \
	  json=$$(GOWORK=off $(GO) mod download -json github.com/jaegertracing/jaeger@$(JAEGER_VERSION)) || { echo "$$json" >&2; exit 1; }; \
	  dir=$$(echo "$$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	  test -n "$$dir" || { echo "go mod download github.com/jaegertracing/jaeger@$(JAEGER_VERSION) named no folder:" >&2; echo "$$json" >&2; exit 1; }; \
	  tmp=$$(mktemp -d); trap 'chmod -R u+w "$$tmp"; rm -rf "$$tmp"' EXIT; \
	  cp -R "$$dir" "$$tmp/src"; chmod -R u+w "$$tmp/src"; \
	  mkdir -p "$$(dirname "$(JAEGER)")"; \
	  echo "building Jaeger $(JAEGER_VERSION) into $(JAEGER)"; \
	  (cd "$$tmp/src" && GOWORK=off GOFLAGS="$$GOFLAGS -mod=mod" $(GO) build -trimpath -o "$(JAEGER).tmp" ./cmd/jaeger); \
	  mv "$(JAEGER).tmp" "$(JAEGER)"; \
	fi

# The per-package timeout catches a hang. It is long because the cli
# package's scripts take ~15 min on a quiet 2-core machine and twice that
# when the machine is shared; CI's whole budget is 90 min.
#
# Its three parts run at once: vet and the portable suite compile while the
# race suite's tests wait on processes, git and fsync (docs/development.md).
# BG (nice) lets vet have only what the tests leave; the portable suite is
# not niced: its scripts must start within their timeouts.
test: ## vet and run the whole test suite with the race detector
	@$(MAKE) --no-print-directory -j3 test-race test-vet test-portable BG="nice -n 10"

test-vet: ## go vet every module, tests included
	$(BG) $(GO) vet $(CACHEFLAGS) $(PKGS)

test-race: ## the whole test suite with the race detector (no vet, no portable suite)
	$(GO) test $(CACHEFLAGS) -race -count=1 -parallel $(TESTPAR) -timeout 50m $(PKGS)

test-portable: ## the host, procgroup, registry and exec suites again with the portable tag (macOS/Windows fallbacks on Linux)
	$(GO) test $(CACHEFLAGS) -tags portable -race -count=1 -timeout 30m ./host ./internal/isolation/procgroup ./registry ./plugins/exec

reliability-portable: ## the launch-race, containment and orphan trials with the portable tag (docs/reliability.md)
	RELIABILITY_RACE_CALLS=$${RELIABILITY_RACE_CALLS:-200} $(GO) test -tags portable,reliability -count=1 -timeout 60m \
	  -run 'TestReliabilityLaunchRace|TestReliabilityContainment|TestReliabilityOrphans' -v ./internal/reliability 2>&1 | \
	  tee reliability-portable.out | grep -E '^(=== RUN|--- |PASS|FAIL|ok|RESULT)'

cross: ## go vet (tests included) and go build every module for each of PLATFORMS
	@failed=""; for p in $(PLATFORMS); do for m in $(MODULES); do \
	  echo "== $$p $$m"; \
	  (cd $$m && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet $(CACHEFLAGS) ./... && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build $(CACHEFLAGS) -o /dev/null ./...) || failed="$$failed $$p:$$m"; \
	done; done; \
	if [ -n "$$failed" ]; then echo "cross build failed:$$failed"; exit 1; fi

release: ## archives of bin/agent for each of PLATFORMS, stamped with version and commit, and SHA256SUMS, in DIST (dist/)
	rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=agent_$(VERSION)_$${os}_$${arch}; ext=; [ $$os = windows ] && ext=.exe; \
	  echo "== $$name"; mkdir -p $(DIST)/$$name && \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(DIST)/$$name/agent$$ext ./cmd/agent && \
	  cp -R README.md docs $(DIST)/$$name/ && \
	  if [ $$os = windows ]; then \
	    (cd $(DIST) && if command -v zip >/dev/null; then zip -qr $$name.zip $$name; else python3 -m zipfile -c $$name.zip $$name; fi); \
	  else tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; fi || exit 1; \
	  rm -rf $(DIST)/$$name; \
	done
	cd $(DIST) && sha256sum agent_* > SHA256SUMS && cat SHA256SUMS

demo: ## install the bundled example skill from this repo's git history and use it
	bash examples/demo.sh

bench: ## run the benchmarks; benchstat prints medians (figures in docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./host/ ./plugins/exec/ ./plugins/base/ ./registry/ ./cmd/... ./internal/... ./sdk/... | tee bench.out
	$(GO) run $(BENCHSTAT) bench.out

fuzz: ## run every fuzz target for FUZZTIME each; fails at the end if any target failed
	@failed=""; for pkg in $$($(GO) list $(PKGS)); do \
	  list=$$($(GO) test -list '^Fuzz' $$pkg 2>&1) || { echo "$$list"; failed="$$failed $$pkg(list)"; continue; }; \
	  for t in $$(echo "$$list" | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPAR) $$pkg || failed="$$failed $$pkg.$$t"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed (crashers are in the package's testdata/fuzz)"; exit 1; fi

reliability: ## fault, concurrency and hostile-input suite (docs/reliability.md)
	$(GO) test -tags reliability -count=1 -timeout 60m -run 'Reliability' -v $(PKGS) 2>&1 | tee reliability.out | grep -E '^(=== RUN|--- |PASS|FAIL|ok|RESULT)'

proto: ## regenerate proto/skill/v1 with pinned generators (needs protoc)
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=paths=source_relative \
	  --go-grpc_out=. --go-grpc_opt=paths=source_relative proto/skill/v1/skill.proto

# tidy runs go mod tidy in each module, proto first. The placeholder
# versions (v0.0.0) that sdk and the root require are never published, so each
# tidy sees its sibling modules through a temporary replace that is dropped
# again; go.work supplies them for builds.
tidy: ## go mod tidy every module (plain `go mod tidy` at the root cannot resolve sdk and proto)
	cd proto && GOWORK=off $(GO) mod tidy
	cd sdk && GOWORK=off $(GO) mod edit -replace=$(MOD)/proto=../proto && \
	  { GOWORK=off $(GO) mod tidy; rc=$$?; GOWORK=off $(GO) mod edit -dropreplace=$(MOD)/proto; exit $$rc; }
	for d in $(EXAMPLES); do (cd $$d && r=$$(realpath --relative-to=. $(CURDIR)) && \
	  GOWORK=off $(GO) mod edit -replace=$(MOD)/proto=$$r/proto -replace=$(MOD)/sdk=$$r/sdk && \
	  { GOWORK=off $(GO) mod tidy; rc=$$?; GOWORK=off $(GO) mod edit -dropreplace=$(MOD)/proto -dropreplace=$(MOD)/sdk; exit $$rc; }) || exit 1; done
	GOWORK=off $(GO) mod edit -replace=$(MOD)/proto=./proto -replace=$(MOD)/sdk=./sdk && \
	  { GOWORK=off $(GO) mod tidy; rc=$$?; GOWORK=off $(GO) mod edit -dropreplace=$(MOD)/proto -dropreplace=$(MOD)/sdk; exit $$rc; }
	$(MAKE) generate

generate: ## after editing sdk/ or proto/: regenerate the SDK zips agent embeds (internal/build/sdkmod), pin the examples and go.work to them
	$(GO) generate ./internal/build/sdkmod

lint: ## gofmt and vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)

clean: ## remove build output
	rm -rf bin dist bench.out reliability.out reliability-portable.out
