#!/usr/bin/env bash
# Regenerates internal/pb from internal/pb/observe.proto and flight.proto with the pinned
# tools (see README.md). Run from anywhere: `go generate ./...` in the
# module calls it.
set -euo pipefail
cd "$(dirname "$0")/internal/pb"
want_protoc="libprotoc 3.21"
want_go="protoc-gen-go v1.36.12"
want_grpc="protoc-gen-go-grpc 1.5.1"
have_protoc=$(protoc --version)
have_go=$(protoc-gen-go --version)
have_grpc=$(protoc-gen-go-grpc --version)
case "$have_protoc" in "$want_protoc"*) ;; *) echo "gen.sh: need $want_protoc.x, have $have_protoc" >&2; exit 1;; esac
[ "$have_go" = "$want_go" ] || { echo "gen.sh: need $want_go (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12), have $have_go" >&2; exit 1; }
[ "$have_grpc" = "$want_grpc" ] || { echo "gen.sh: need $want_grpc (go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1), have $have_grpc" >&2; exit 1; }
protoc --go_out=. --go_opt=paths=source_relative \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative \
	observe.proto flight.proto
