module github.com/resgraph/resgraph/pkg/state/inmem/boltdb

go 1.26

replace github.com/resgraph/resgraph => ../../../..

// The tests persist protobuf-encoded specs; the module's code does not
// import the protobuf encoding.
replace github.com/resgraph/resgraph/pkg/resource/codec/protobuf => ../../../resource/codec/protobuf

require (
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/resource/codec/protobuf v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.11.1
	go.etcd.io/bbolt v1.4.3
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.27.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/siderolabs/gen v0.8.7 // indirect
	github.com/siderolabs/protoenc v0.2.2 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.29.0 // indirect
	google.golang.org/protobuf v1.36.3 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
