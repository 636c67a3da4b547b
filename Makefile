# resgraph — plain go commands; see README.md.
GO ?= go
PKGS ?= ./...
BENCHCOUNT ?= 6
FUZZTIME ?= 20s
# The etcd state is a module of its own (it depends on the etcd client);
# its tests start a real etcd server (Debian's etcd-server package).
ETCD := pkg/state/etcd
# The bbolt persistence of inmem is a module of its own too (it depends on
# bbolt); its tests include the crash test (child processes killed with
# SIGKILL).
BOLTDB := pkg/state/inmem/boltdb
# The Prometheus exporter is a module of its own (it depends on
# client_golang); its test scrapes a real HTTP listener.
PROM := exporters/prometheus
# The protobuf spec encoding is a module of its own (it depends on
# protoenc), so that only its users depend on protoenc.
PROTO := pkg/resource/codec/protobuf
# The remote State (gRPC server and client) is a module of its own (it
# depends on gRPC and protobuf); its tests serve states over loopback TCP
# and unix sockets.
REMOTE := pkg/state/remote

.PHONY: test bench lint fuzz sim cover tools

## test: vet, then every test with the race detector (the CI command)
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)
	cd $(ETCD) && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd $(BOLTDB) && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd $(PROM) && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd $(PROTO) && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd $(REMOTE) && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## bench: every benchmark, -count $(BENCHCOUNT), with allocations (without
## inmem's mutation detector, which is on by default in test binaries)
bench:
	RESGRAPH_MUTATION_DETECTOR=0 $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) $(PKGS)

## lint: gofmt check, go mod tidy check (every module of the repo), vet, staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for mod in $$(git ls-files 'go.mod' '*/go.mod'); do dir=$$(dirname $$mod); \
		if ! (cd $$dir && $(GO) mod tidy -diff); then echo "go mod tidy needed in $$dir"; exit 1; fi; done
	$(GO) vet $(PKGS)
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.6.1
	staticcheck $(PKGS)
	cd $(ETCD) && $(GO) vet ./... && staticcheck ./...
	cd $(BOLTDB) && $(GO) vet ./... && staticcheck ./...
	cd $(PROM) && $(GO) vet ./... && staticcheck ./...
	cd $(PROTO) && $(GO) vet ./... && staticcheck ./...
	cd $(REMOTE) && $(GO) vet ./... && staticcheck ./...

## fuzz: a short, bounded run of every fuzz target
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzStateAgainstModel$$' -fuzztime $(FUZZTIME) ./pkg/state/inmem
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQuery$$' -fuzztime $(FUZZTIME) ./pkg/resource
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) ./pkg/state/inmem
	$(GO) test -run '^$$' -fuzz '^FuzzLabelQueriesCached$$' -fuzztime $(FUZZTIME) ./pkg/runtime
	cd $(BOLTDB) && $(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) .
	cd $(ETCD) && $(GO) test -run '^$$' -fuzz '^FuzzLabelQueries$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) ./pkg/resource/codec
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./pkg/resource/codec
	cd $(PROTO) && $(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) .
	cd $(PROTO) && $(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) .
	cd $(REMOTE) && $(GO) test -run '^$$' -fuzz '^FuzzServerRequest$$' -fuzztime $(FUZZTIME) .

## sim: the simulations (pkg/runtime/runtimetest/sim: the mutants, the
## demo's controllers, the generic controllers' chains) with $(SIMSEEDS)
## seeds each; make test runs them with short budgets
SIMSEEDS ?= 1000
sim:
	RESGRAPH_SIM_SEEDS=$(SIMSEEDS) $(GO) test -count=1 -timeout 3h -v -run 'Simulation|Mutants|Chain_Passes' \
		./pkg/runtime/runtimetest/sim ./cmd/demo/internal/controllers ./pkg/generic

cover:
	$(GO) test -count=1 -coverprofile=cover.out $(PKGS)
	$(GO) tool cover -func=cover.out | tail -1
