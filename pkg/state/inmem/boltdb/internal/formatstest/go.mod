module github.com/resgraph/resgraph/pkg/state/inmem/boltdb/internal/formatstest

go 1.26

replace github.com/resgraph/resgraph => ../../../../../..

replace github.com/resgraph/resgraph/pkg/state/inmem/boltdb => ../..

replace github.com/resgraph/resgraph/pkg/resource/codec/protobuf => ../../../../../resource/codec/protobuf

require (
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/resource/codec/protobuf v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/state/inmem/boltdb v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/siderolabs/protoenc v0.2.4 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	golang.org/x/sys v0.29.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
