module github.com/resgraph/resgraph/cmd/demo

go 1.26.0

replace (
	github.com/resgraph/resgraph => ../..
	github.com/resgraph/resgraph/pkg/observe/remote => ../../pkg/observe/remote
	github.com/resgraph/resgraph/pkg/state/remote => ../../pkg/state/remote
)

// The configuration is kept in an encrypted bbolt file (--config-db).
replace github.com/resgraph/resgraph/pkg/state/inmem/boltdb => ../../pkg/state/inmem/boltdb

require (
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/observe/remote v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/state/inmem/boltdb v0.0.0-00010101000000-000000000000
	github.com/resgraph/resgraph/pkg/state/remote v0.0.0-00010101000000-000000000000
	github.com/siderolabs/gen v0.8.7
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.27.0
	golang.org/x/sync v0.23.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/chromedp/chromedp v0.23.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
