package sim

import (
	"flag"
	"os"
	"strconv"
	"time"
)

// The budget of Test and Explore: flags of the test binary, each
// overridable by an environment variable when the flag is not given
// (make targets that run many packages use the variables: a flag unknown
// to a test binary fails it).
var (
	flagSeeds  = flag.Int("sim.seeds", 0, "sim: seeds to explore per scenario (env RESGRAPH_SIM_SEEDS; default: the scenario's, or 100)")
	flagTime   = flag.Duration("sim.time", 0, "sim: wall-time budget per scenario (env RESGRAPH_SIM_TIME; default: the scenario's, or none)")
	flagSeed   = flag.Uint64("sim.seed", 0, "sim: first seed (env RESGRAPH_SIM_SEED; default 1)")
	flagReplay = flag.String("sim.replay", "", "sim: replay the run of this token instead of exploring (env RESGRAPH_SIM_REPLAY)")
	flagShrink = flag.Duration("sim.shrinktime", 0, "sim: wall-time budget of shrinking a failure (env RESGRAPH_SIM_SHRINKTIME; default 1m)")
	flagRec    = flag.String("sim.recording", "", "sim: replay this recording file (package recording) as the scenario's starting state and workload (env RESGRAPH_SIM_RECORDING)")
)

type budget struct {
	seeds      int
	time       time.Duration
	first      uint64
	replay     string
	recording  string
	shrinkTime time.Duration
}

// budgetOf resolves the budget: a flag given on the command line, else
// its environment variable, else the scenario's, else the default.
func budgetOf(sc *Scenario) budget {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	b := budget{seeds: 100, first: 1, time: sc.Time, shrinkTime: time.Minute}
	if sc.Seeds > 0 {
		b.seeds = sc.Seeds
	}
	if v, ok := intSetting(set["sim.seeds"], *flagSeeds, "RESGRAPH_SIM_SEEDS"); ok && v > 0 {
		b.seeds = v
	}
	if v, ok := durationSetting(set["sim.time"], *flagTime, "RESGRAPH_SIM_TIME"); ok {
		b.time = v
	}
	if v, ok := durationSetting(set["sim.shrinktime"], *flagShrink, "RESGRAPH_SIM_SHRINKTIME"); ok && v > 0 {
		b.shrinkTime = v
	}
	if set["sim.seed"] {
		b.first = *flagSeed
	} else if v, err := strconv.ParseUint(os.Getenv("RESGRAPH_SIM_SEED"), 10, 64); err == nil {
		b.first = v
	}
	if set["sim.replay"] {
		b.replay = *flagReplay
	} else {
		b.replay = os.Getenv("RESGRAPH_SIM_REPLAY")
	}
	b.recording = recordingSetting()
	return b
}

// recordingSetting is the -sim.recording flag, else its environment
// variable.
func recordingSetting() string {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "sim.recording" })
	if set {
		return *flagRec
	}
	return os.Getenv("RESGRAPH_SIM_RECORDING")
}

func intSetting(flagSet bool, flagValue int, env string) (int, bool) {
	if flagSet {
		return flagValue, true
	}
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil {
		return v, true
	}
	return 0, false
}

func durationSetting(flagSet bool, flagValue time.Duration, env string) (time.Duration, bool) {
	if flagSet {
		return flagValue, true
	}
	if v, err := time.ParseDuration(os.Getenv(env)); err == nil {
		return v, true
	}
	return 0, false
}
