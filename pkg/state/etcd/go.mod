module github.com/resgraph/resgraph/pkg/state/etcd

go 1.26.0

require (
	go.etcd.io/etcd/client/v3 v3.6.16
	go.uber.org/zap v1.27.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/klauspost/compress v1.18.7 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/siderolabs/gen v0.8.7 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.16 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/resgraph/resgraph => ../../..

require (
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.11.1
	go.etcd.io/etcd/api/v3 v3.6.16
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.83.2
)
