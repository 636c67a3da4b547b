module github.com/resgraph/resgraph/bench

go 1.26.2

// The resgraph side builds against this repository.
replace (
	github.com/resgraph/resgraph => ../
	github.com/resgraph/resgraph/pkg/state/etcd => ../pkg/state/etcd
)

require (
	github.com/cosi-project/runtime v1.16.2
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/state/etcd v0.0.0-00010101000000-000000000000
	go.etcd.io/etcd/client/v3 v3.6.16
	go.uber.org/zap v1.28.0
)

require (
	github.com/klauspost/compress v1.18.7 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/gertd/go-pluralize v0.2.1 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	github.com/resgraph/resgraph/pkg/state/remote v0.0.0-00010101000000-000000000000
	github.com/siderolabs/gen v0.8.7 // indirect
	github.com/siderolabs/go-pointer v1.0.1 // indirect
	github.com/siderolabs/protoenc v0.2.4 // indirect
	go.etcd.io/etcd/api/v3 v3.6.16 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.16 // indirect
	go.uber.org/goleak v1.3.0
	go.uber.org/multierr v1.11.0 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.4 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/resgraph/resgraph/pkg/state/remote => ../pkg/state/remote
