module github.com/resgraph/resgraph

go 1.26

require (
	github.com/siderolabs/gen v0.8.7
	go.uber.org/zap v1.27.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sync v0.18.0 // indirect
)
