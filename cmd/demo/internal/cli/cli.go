// Package cli parses the demo's command line:
//
//	demo [run] [flags]         run the agent (the default)
//	demo graph [--format F]    print the controller/resource graph (dot, mermaid, json)
//	demo apply FILE            validate an intent file and print what it would create
//	demo explain --addr A (resource NS/TYPE/ID | controller NAME)
//	                           ask a running agent's debug endpoint why
//	demo help [COMMAND]        print the usage (of a command)
//
// [Parse] never exits the process and never writes anywhere but the writers
// it is given; it returns a [Command] or an error. help, -h and --help print
// the usage on stdout and return flag.ErrHelp; a command's -h prints its
// flags on stderr (the flag package's way) and returns flag.ErrHelp too.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/graph"
)

// Subcommand names.
const (
	CmdRun     = "run"
	CmdGraph   = "graph"
	CmdApply   = "apply"
	CmdExplain = "explain"
	CmdHelp    = "help"
)

// NoDelete is the --delete-link value that deletes no link.
const NoDelete = "none"

// Command is a parsed command line.
type Command struct {
	// Name is CmdRun, CmdGraph or CmdApply.
	Name string
	// GraphFormat is the format of CmdGraph.
	GraphFormat string
	// ApplyFile is the file of CmdApply.
	ApplyFile string
	// Plan makes CmdApply plan the intent of ApplyFile against the state
	// the agent reaches from Current (an intent file; "" the built-in
	// sample) instead of printing what it would create.
	Plan    bool
	Current string
	// Run are the options of CmdRun.
	Run RunOptions
	// Explain are the options of CmdExplain.
	Explain ExplainOptions
}

// ExplainOptions are the options of the explain command.
type ExplainOptions struct {
	// Addr is the debug endpoint of a running agent: a unix socket path
	// (its run --debug-socket; any Addr with a "/") or HOST:PORT (its run
	// --debug-addr).
	Addr string
	// Cert and Key are the client's certificate and key, CA the CAs the
	// agent's certificate is verified against (PEM files): mutual TLS to a
	// HOST:PORT Addr. None of them: plain HTTP.
	Cert, Key, CA string
	// Resource is the resource to explain (NAMESPACE/TYPE/ID), or
	// Controller the controller; exactly one is set.
	Resource, Controller string
	// JSON prints the explanation as JSON instead of text.
	JSON bool
	// Timeout bounds the request.
	Timeout time.Duration
}

// RunOptions are the options of the run command.
type RunOptions struct {
	// ApplyFile is the intent file to apply at start; "" applies the
	// embedded sample.
	ApplyFile string
	// Debug are the debug endpoint's doors; none by default.
	Debug DebugOptions
	// DeleteLink is the link deleted after DeleteAfter; "" means the last
	// link of the intent, NoDelete none.
	DeleteLink string
	// Duration stops the agent after this long; 0 runs until interrupted.
	Duration time.Duration
	// DeleteAfter is when DeleteLink is deleted; 0 means half of
	// Duration, or 5 s without a Duration.
	DeleteAfter time.Duration
	// FlapMin and FlapMax bound the interval between two carrier changes
	// of the simulated kernel; FlapMin == 0 disables flapping.
	FlapMin, FlapMax time.Duration
	// Seed seeds the simulated kernel.
	Seed uint64
	// ApplyFailures is how many times the kernel refuses each new link
	// before accepting it.
	ApplyFailures int
	// KernelLatency is how long the kernel takes to create a link.
	KernelLatency time.Duration
	// Verbose logs at debug level.
	Verbose bool
	// Record is a file the agent writes its flight recorder's window to
	// when it stops; RecordDir a directory where the recorder keeps the
	// recordings it takes on its own (a hot loop, a controller failing).
	Record, RecordDir string
	// ConfigDB is the bbolt file that keeps the configuration namespace
	// (the LinkSpecs), encrypted, across runs; "" keeps everything in
	// memory.
	ConfigDB string
	// KeysFile is the key file of ConfigDB (package atrest's text form);
	// "" reads the keys from the environment variable KeysEnv.
	KeysFile string
	// DataDir is the agent's data directory (DefaultDataDir unless
	// --data-dir says otherwise).
	DataDir string
	// APISocket is the unix socket the agent serves its API on (the
	// state, explanations, the graph, health: what resgraphctl talks
	// to); "" serves none. Its default is api.sock in DataDir.
	APISocket string
	// Rules is the API's access rule file (package access); "" gives the
	// agent's own uid every access and nobody else any.
	Rules string
	// APIAddr also serves the API on this TCP address, with mutual TLS:
	// APICert and APIKey are the agent's certificate and key, APIClientCA
	// the CA its clients' certificates are verified against.
	APIAddr, APICert, APIKey, APIClientCA string
}

// NoAPI is the --api-socket value that serves no API.
const NoAPI = "none"

// DefaultDataDir is the agent's data directory unless --data-dir names
// another: $XDG_RUNTIME_DIR/resgraph-demo, or resgraph-demo-UID in the
// temporary directory when XDG_RUNTIME_DIR is not set. resgraphctl finds
// the API socket in it by default.
func DefaultDataDir() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "resgraph-demo")
	}
	return filepath.Join(os.TempDir(), "resgraph-demo-"+strconv.Itoa(os.Getuid()))
}

// KeysEnv is the environment variable that holds the keys of --config-db
// when --keys is not given.
const KeysEnv = "RESGRAPH_DEMO_KEYS"

// DeleteDelay returns when the run deletes its link: DeleteAfter if set,
// else half of Duration, else 5 s.
func (o RunOptions) DeleteDelay() time.Duration {
	switch {
	case o.DeleteAfter > 0:
		return o.DeleteAfter
	case o.Duration > 0:
		return o.Duration / 2
	default:
		return 5 * time.Second
	}
}

const usage = `Usage:
  demo [run] [flags]           run the network agent (the default command)
  demo graph [--format FORMAT] print the controller/resource graph and exit
  demo apply FILE              validate an intent file and print what it would create (dry run)
  demo apply --plan [--current CURRENT] FILE
                               plan the change from the intent CURRENT (default: the sample)
                               to FILE: what the agent would create, update and destroy
  demo explain --addr SOCKET|HOST:PORT resource NAMESPACE/TYPE/ID
  demo explain --addr SOCKET|HOST:PORT controller NAME
                               ask a running agent's debug endpoint (run --debug-socket,
                               or --debug-addr: mutual TLS with --client-certificate,
                               --client-key, --certificate-authority) why a resource
                               or a controller is where it is
  demo help [COMMAND]          print this usage, or the flags of a command

A command's flags may come before or after its words (-- ends the flags).
Run 'demo help run' or 'demo help graph' for the flags of a command.
`

// Parse parses args (without the program name). Help goes to stdout,
// errors and a command's -h to stderr.
func Parse(args []string, stdout, stderr io.Writer) (Command, error) {
	name := CmdRun
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		_, _ = io.WriteString(stdout, usage)
		return Command{}, flag.ErrHelp
	}
	switch name {
	case CmdHelp:
		return help(args, stdout, stderr)
	case CmdRun:
		return parseRun(args, stderr)
	case CmdGraph:
		return parseGraph(args, stderr)
	case CmdApply:
		return parseApply(args, stderr)
	case CmdExplain:
		return parseExplain(args, stderr)
	default:
		_, _ = io.WriteString(stderr, usage)
		return Command{}, fmt.Errorf("unknown command %q", name)
	}
}

// help prints the usage, or a command's flags, on stdout.
func help(args []string, stdout, stderr io.Writer) (Command, error) {
	switch {
	case len(args) == 0:
		_, _ = io.WriteString(stdout, usage)
		return Command{}, flag.ErrHelp
	case len(args) > 1:
		_, _ = io.WriteString(stderr, usage)
		return Command{}, fmt.Errorf("help: want at most one COMMAND, got %d", len(args))
	}
	switch args[0] {
	case CmdRun, CmdGraph, CmdApply, CmdExplain:
		return Parse([]string{args[0], "-h"}, stdout, stdout)
	case CmdHelp:
		_, _ = io.WriteString(stdout, usage)
		return Command{}, flag.ErrHelp
	}
	_, _ = io.WriteString(stderr, usage)
	return Command{}, fmt.Errorf("help: unknown command %q", args[0])
}

func newFlagSet(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "Usage: demo %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseAnywhere parses args with fs, flags before, between and after
// the positional arguments (as "demo explain controller NAME --json" and
// "demo apply FILE --plan" are typed), and returns the positional ones in
// their order. Everything after "--" is positional.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func parseRun(args []string, stderr io.Writer) (Command, error) {
	fs := newFlagSet(CmdRun, stderr, "run [flags]")
	var o RunOptions
	flap := true
	fs.DurationVar(&o.Duration, "duration", 0, "stop after this long and exit 0 (0: run until interrupted)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the simulated kernel (link flapping, MAC addresses)")
	fs.StringVar(&o.ApplyFile, "apply", "", "intent `FILE` to apply at start (default: the built-in sample)")
	fs.StringVar(&o.DeleteLink, "delete-link", "", "link to delete during the run, to show the ordered teardown (default: the intent's last link; \"none\": keep every link)")
	fs.DurationVar(&o.DeleteAfter, "delete-after", 0, "when to delete --delete-link (default: half of --duration, or 5s)")
	fs.BoolVar(&flap, "flap", true, "let the simulated kernel flap link carriers")
	fs.DurationVar(&o.FlapMin, "flap-min", time.Second, "shortest interval between two carrier changes")
	fs.DurationVar(&o.FlapMax, "flap-max", 3*time.Second, "longest interval between two carrier changes")
	fs.IntVar(&o.ApplyFailures, "apply-failures", 2, "how many times the kernel refuses each new link before accepting it (shows retries with backoff)")
	fs.DurationVar(&o.KernelLatency, "kernel-latency", 0, "how long the simulated kernel takes to create a link (holds the agent back: it is ready, /readyz and systemd's READY=1, only once its controllers caught up)")
	fs.BoolVar(&o.Verbose, "verbose", false, "log at debug level")
	fs.StringVar(&o.Record, "record", "", "write the flight recorder's window to `FILE` when the agent stops (replay it: see docs/demo.md)")
	fs.StringVar(&o.RecordDir, "record-dir", "", "keep the recordings the flight recorder takes on its own (a hot loop, a controller failing) in `DIR`")
	fs.StringVar(&o.ConfigDB, "config-db", "", "keep the configuration (the LinkSpecs) in this bbolt `FILE`, encrypted, across runs; everything else stays in memory")
	fs.StringVar(&o.KeysFile, "keys", "", "the encryption keys of --config-db, one `FILE` line each (ID and base64 of 32 bytes; the first writes); default: $"+KeysEnv)
	fs.StringVar(&o.DataDir, "data-dir", DefaultDataDir(), "the agent's data `DIR` (created if missing), where its API socket is")
	fs.StringVar(&o.APISocket, "api-socket", "", "serve the API (resgraphctl talks to it) on the unix socket `PATH` (default: api.sock in --data-dir; \"none\": serve no API)")
	o.accessFlags(fs)
	o.Debug.debugFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Command{}, err
	}
	if fs.NArg() > 0 {
		return Command{}, fmt.Errorf("run: unexpected argument %q", fs.Arg(0))
	}
	if err := o.check(flap); err != nil {
		return Command{}, err
	}
	return Command{Name: CmdRun, Run: o}, nil
}

// check refuses run options that do not go together, and clears the
// flapping interval without flap.
func (o *RunOptions) check(flap bool) error {
	var errs []error
	if o.KeysFile != "" && o.ConfigDB == "" {
		errs = append(errs, errors.New("--keys is the key file of --config-db, which is not given"))
	}
	if o.Duration < 0 {
		errs = append(errs, fmt.Errorf("--duration must not be negative, got %s", o.Duration))
	}
	if o.DeleteAfter < 0 {
		errs = append(errs, fmt.Errorf("--delete-after must not be negative, got %s", o.DeleteAfter))
	}
	if o.ApplyFailures < 0 {
		errs = append(errs, fmt.Errorf("--apply-failures must not be negative, got %d", o.ApplyFailures))
	}
	if flap {
		if o.FlapMin <= 0 {
			errs = append(errs, fmt.Errorf("--flap-min must be positive, got %s (use --flap=false to disable flapping)", o.FlapMin))
		}
		if o.FlapMax < o.FlapMin {
			errs = append(errs, fmt.Errorf("--flap-max (%s) must not be below --flap-min (%s)", o.FlapMax, o.FlapMin))
		}
	} else {
		o.FlapMin, o.FlapMax = 0, 0
	}
	errs = append(errs, o.Debug.check()...)
	errs = append(errs, o.checkAccess()...)
	switch o.APISocket {
	case NoAPI:
		o.APISocket = ""
	case "":
		if o.DataDir == "" {
			errs = append(errs, errors.New("--data-dir is empty (give a directory, or --api-socket PATH)"))
		}
		o.APISocket = filepath.Join(o.DataDir, "api.sock")
	}
	return errors.Join(errs...)
}

func parseGraph(args []string, stderr io.Writer) (Command, error) {
	fs := newFlagSet(CmdGraph, stderr, "graph [--format dot|mermaid|json]")
	format := fs.String("format", "dot", "output format: dot, mermaid or json")
	if err := fs.Parse(args); err != nil {
		return Command{}, err
	}
	if fs.NArg() > 0 {
		return Command{}, fmt.Errorf("graph: unexpected argument %q", fs.Arg(0))
	}
	if _, err := graph.ParseFormat(*format); err != nil {
		return Command{}, fmt.Errorf("graph: unknown --format %q: use dot, mermaid or json", *format)
	}
	return Command{Name: CmdGraph, GraphFormat: *format}, nil
}

func parseApply(args []string, stderr io.Writer) (Command, error) {
	fs := newFlagSet(CmdApply, stderr, "apply [--plan [--current CURRENT]] FILE")
	plan := fs.Bool("plan", false, "plan the change from the intent --current to FILE instead of a dry run")
	current := fs.String("current", "", "with --plan: the intent the agent runs now, `FILE` (default: the built-in sample)")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return Command{}, err
	}
	if len(pos) != 1 {
		fs.Usage()
		return Command{}, fmt.Errorf("apply: want exactly one intent FILE, got %d arguments", len(pos))
	}
	if *current != "" && !*plan {
		return Command{}, errors.New("apply: --current needs --plan")
	}
	return Command{Name: CmdApply, ApplyFile: pos[0], Plan: *plan, Current: *current}, nil
}

func parseExplain(args []string, stderr io.Writer) (Command, error) {
	fs := newFlagSet(CmdExplain, stderr, "explain --addr SOCKET|HOST:PORT (resource NAMESPACE/TYPE/ID | controller NAME)")
	var o ExplainOptions
	fs.StringVar(&o.Addr, "addr", "", "the running agent's debug endpoint: a unix socket `PATH` (its run --debug-socket) or HOST:PORT (its run --debug-addr)")
	fs.StringVar(&o.Cert, "client-certificate", "", "with a HOST:PORT --addr, present this certificate `FILE` (PEM; mutual TLS): the agent knows you by it")
	fs.StringVar(&o.Key, "client-key", "", "the key `FILE` (PEM) of --client-certificate")
	fs.StringVar(&o.CA, "certificate-authority", "", "verify the agent's certificate against the CAs in this `FILE` (PEM)")
	fs.BoolVar(&o.JSON, "json", false, "print the explanation as JSON")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "give up after this long")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return Command{}, err
	}
	var errs []error
	errs = append(errs, o.checkAddr()...)
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("explain: --timeout must be positive, got %s", o.Timeout))
	}
	switch {
	case len(pos) != 2:
		errs = append(errs, fmt.Errorf("explain: want resource NAMESPACE/TYPE/ID or controller NAME, got %d arguments", len(pos)))
	case pos[0] == "resource":
		if parts := strings.SplitN(pos[1], "/", 3); len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			errs = append(errs, fmt.Errorf("explain: resource %q: want NAMESPACE/TYPE/ID", pos[1]))
		}
		o.Resource = pos[1]
	case pos[0] == "controller":
		if pos[1] == "" {
			errs = append(errs, errors.New("explain: empty controller name"))
		}
		o.Controller = pos[1]
	default:
		errs = append(errs, fmt.Errorf("explain: %q: want resource or controller", pos[0]))
	}
	if err := errors.Join(errs...); err != nil {
		return Command{}, err
	}
	return Command{Name: CmdExplain, Explain: o}, nil
}
