module github.com/resgraph/resgraph/pkg/resource/codec/protobuf

go 1.26

replace github.com/resgraph/resgraph => ../../../..

require (
	github.com/resgraph/resgraph v0.0.0-00010101000000-000000000000
	github.com/siderolabs/protoenc v0.2.4
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
	google.golang.org/protobuf v1.36.10
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
