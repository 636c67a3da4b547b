# resgraph — plain go commands; see README.md.
GO ?= go
PKGS ?= ./...
BENCHCOUNT ?= 6
FUZZTIME ?= 20s
# Every module of the repository, the root first: the directories go.work
# lists. A module of its own keeps its dependencies from the modules that
# do not need them (the etcd client, bbolt, client_golang, protoenc, and the
# demo's); a new module is added to go.work (go work use ./DIR) and is then
# tested, linted and downloaded like the others. Each module is tested and
# linted on its own (GOWORK=off), as its users build it.
MODULES := $(shell $(GO) work edit -json 2>/dev/null | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p')
# Runs a command in every module and reports the modules it failed in.
define each_module
	@[ -n "$(MODULES)" ] || { echo "go.work lists no module (run make from the repository's root)"; exit 1; }; \
	failed=""; for m in $(MODULES); do echo "== $$m: $(1)"; \
		(cd $$m && export GOWORK=off && $(1)) || failed="$$failed $$m"; done; \
	if [ -n "$$failed" ]; then echo "FAILED in:$$failed"; exit 1; fi
endef
PROTO := pkg/resource/codec/protobuf

.PHONY: test setup bench lint fuzz sim cover tools compare

## test: installs what the tests need when it is missing (scripts/setup),
## then vet and every test with the race detector, in every module (the CI
## command)
test: setup
	$(call each_module,$(GO) vet ./... && $(GO) test -race -count=1 ./...)

## setup: what the tests need (etcd-server, chromium, graphviz, ...): as
## root it installs what is missing; otherwise it prints the command
setup:
	@scripts/setup

## bench: every benchmark, -count $(BENCHCOUNT), with allocations (without
## inmem's mutation detector, which is on by default in test binaries)
bench:
	RESGRAPH_MUTATION_DETECTOR=0 $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) $(PKGS)

## lint: gofmt check, go mod tidy check (every module of the repo), vet, staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(call each_module,$(GO) mod tidy -diff)
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.6.1
	$(call each_module,$(GO) vet ./... && staticcheck ./...)

## fuzz: a short, bounded run of every fuzz target, and the remote State's
## hostile-client suite at length (2000 bystander rounds per attack)
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzStateAgainstModel$$' -fuzztime $(FUZZTIME) ./pkg/state/inmem
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQuery$$' -fuzztime $(FUZZTIME) ./pkg/resource
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) ./pkg/state/inmem
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQueriesCached$$' -fuzztime $(FUZZTIME) ./pkg/runtime
	cd pkg/state/inmem/boltdb && $(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) .
	cd pkg/state/etcd && $(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) ./pkg/resource/codec
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./pkg/resource/codec
	cd $(PROTO) && $(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) .
	cd $(PROTO) && $(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) .
	cd pkg/state/remote && $(GO) test -run '^$$' -fuzz '^FuzzServerRequest$$' -fuzztime $(FUZZTIME) .
	cd pkg/state/remote && $(GO) test -run '^$$' -fuzz '^FuzzGuardedRequest$$' -fuzztime $(FUZZTIME) .
	cd pkg/state/remote && RESGRAPH_HOSTILE_ROUNDS=2000 $(GO) test -race -count=1 -v -run 'Hostile' .
	cd pkg/state/atrest && $(GO) test -run '^$$' -fuzz '^FuzzDecryptRecord$$' -fuzztime $(FUZZTIME) .

## sim: the simulations (pkg/runtime/runtimetest/sim: the mutants, the
## demo's controllers, the generic controllers' chains) with $(SIMSEEDS)
## seeds each; make test runs them with short budgets
SIMSEEDS ?= 1000
sim:
	RESGRAPH_SIM_SEEDS=$(SIMSEEDS) $(GO) test -count=1 -timeout 3h -v -run 'Simulation|Mutants|Chain_Passes' \
		./pkg/runtime/runtimetest/sim ./cmd/demo/internal/controllers ./pkg/generic

## compare: the side-by-side harness (bench/compare; bench/README.md): the
## established runtime, resgraph and the floor on W1-W6; flags in ARGS,
## e.g. make compare ARGS='--quick' or ARGS='-r 3 --update-readme'
ARGS ?= -r 3
compare:
	bench/compare $(ARGS)

cover:
	$(GO) test -count=1 -coverprofile=cover.out $(PKGS)
	$(GO) tool cover -func=cover.out | tail -1
