#!/usr/bin/env bash
# Regenerates the Go code of specs.proto and strict.proto (committed).
# Pinned tools: protoc 3.21 (Debian's protobuf-compiler, libprotoc 3.21.12)
# and protoc-gen-go v1.36.12 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
set -euo pipefail
cd "$(dirname "$0")"
want_gen="protoc-gen-go v1.36.12"
have_gen=$(protoc-gen-go --version)
[ "$have_gen" = "$want_gen" ] || { echo "gen.sh: $have_gen, want $want_gen" >&2; exit 1; }
case "$(protoc --version)" in "libprotoc 3.21."*) ;; *) echo "gen.sh: $(protoc --version), want libprotoc 3.21.x" >&2; exit 1;; esac
protoc -I . -I /usr/include --go_out=. --go_opt=paths=source_relative specs.proto strict.proto
