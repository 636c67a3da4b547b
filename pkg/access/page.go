package access

// Page names a group of debug pages (package debughttp) or of the calls a
// daemon's API serves beside its resources (explanations, the graph,
// health): a role grants pages by these names, "*" granting all.
type Page string

// The built-in pages.
const (
	// PagePprof: the runtime's profiles and expvar (/debug/pprof/,
	// /debug/vars).
	PagePprof Page = "pprof"
	// PageExplain: explanations and the trace (/debug/explain,
	// /debug/trace; the API's ExplainResource and ExplainController).
	// Resources of a sensitive type are left out of them for a subject
	// not granted the type by name (rule A2).
	PageExplain Page = "explain"
	// PageGraph: the dependency graph, the live graph and the
	// controllers' page (/debug/graph, /debug/graph/live,
	// /debug/controllers; the API's Graph).
	PageGraph Page = "graph"
	// PageHealth: readiness and liveness (/healthz, /readyz; the API's
	// Health and grpc.health.v1).
	PageHealth Page = "health"
	// PageRecording: the flight recorder's pages (/debug/recording/).
	// A recording holds every recorded kind, sensitive ones included:
	// grant it as you would grant those types.
	PageRecording Page = "recording"
)

// BuiltinPages lists the built-in pages.
var BuiltinPages = []Page{PagePprof, PageExplain, PageGraph, PageHealth, PageRecording}
