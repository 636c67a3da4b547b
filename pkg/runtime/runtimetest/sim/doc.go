// Package sim runs a daemon's real controllers on the real Runtime under a
// seeded scheduler, to find the bugs that an unlucky order of changes, a
// conflict or a crash at the wrong moment cause: it explores orderings and
// faults by seed, checks invariants after every step and convergence at the
// end, and turns a failure into the smallest run that fails the same way,
// replayable with one command. It has two entry points: [Test] for tests
// (many seeds, a failure fails the test) and [Replay] for one recorded run;
// both return a [Result].
//
//	func TestSimulation(t *testing.T) {
//		sim.Test(t, sim.Scenario{
//			Name:     "chain",
//			Setup:    func(*sim.World) (sim.System, error) { return sim.System{Register: register}, nil },
//			Workload: sim.Generate(20, sim.Template{IDs: ids, New: newInput}),
//			Faults:   sim.AllFaults(),
//			Final:    func(v sim.View) error { ... every input has its output ... },
//		})
//	}
//
// # A run
//
// Each run (one seed) happens in a testing/synctest bubble of its own: an
// in-memory state, a Runtime over it with the scenario's controllers
// (System.Register), the world Setup built (fakes of what the daemon talks
// to). The Runtime runs as it always does, but every decision it leaves to
// its goroutines waits for the simulator: a change routed to a QController
// waits to be delivered to its queue, a QController item waits to run, a
// Controller's start and each of its reconcile passes wait to happen, as
// does each call of a QController's RunHook.
// At each step, once every goroutine of the bubble is blocked (synctest.Wait),
// the scheduler lists what may happen next — deliver one change to one
// queue, run one item, let one Controller start or take its pass, call
// one RunHook, let a cached kind's cache take in one change, pass one of the world's
// notifications on (World.Relay), advance virtual time to the Runtime's next
// timer (a restart backoff, a delayed item), take the workload's next op
// — and picks one with the run's seeded generator. That decision is a
// step (the word means nothing else here). Each step takes
// Bounds.StepTime of virtual time. A Controller is woken at once by a
// change (it reads the state, not the change): what the schedule orders is
// its pass.
//
// The workload is what outside writers do, in order: set a resource
// (create it, or write its spec, labels and annotations), remove one (tear
// it down; destroy it once its finalizers are gone, as
// state.TeardownAndDestroy does), or run an action of the world (a cable
// unplugged): each is an [Op]. A Script is the same for every seed;
// Generate draws a random one per seed from templates. When the workload's
// ops are done the
// faults stop and the run must converge: nothing left to do and no timer
// of the Runtime pending, and quiet for Bounds.Quiet (timers of user code
// that fire meanwhile wake the scheduler up), within Bounds.Converge.
//
// # Recordings
//
// A Scenario with a Recording (package recording: what a daemon's flight
// recorder kept in production) replays it: the run starts from the
// recording's starting state, as it was (versions, owners, finalizers,
// phases), and its workload is the recording's outside changes and world
// actions (each world action a Do of the System's action of that name),
// each taken no earlier than its recorded time; the world's Setup builds
// its fakes in the condition of World.Initial. A run fails its setup when
// the daemon's controllers read or write a kind the recording lacks.
// Then Test explores orderings and faults around the recorded workload
// and shrinks what fails, so that "it happened once in production" is a
// seed and a replay token. With MatchRecording, the reference run (every
// change handled at once, no fault) must reproduce the recording: the
// same commits of each resource, in order, and the same final state; a
// world fake that reads through World.Observed returns there what the
// recorded daemon read from the world (its other runs read the fake's own
// state). The test binary's -sim.recording=FILE (or RESGRAPH_SIM_RECORDING) replays a
// file with the daemon's scenario, decoded with its Codec (a relative
// path is relative to the test's package directory, where go test runs
// it); a failure's replay command names the file by its absolute path:
//
//	go test ./cmd/demo/internal/controllers -run '^TestSimulation$' -sim.recording=$PWD/incident.rgrec
//
// A sensitive kind's specs (the recording says which) are never printed
// in transcripts.
//
// # Faults
//
// Each fault is off or on with a rate (Faults; AllFaults turns them all
// on): a controller's write fails with a conflict or a transient error; a
// write commits and then its writer crashes (the Controller's Run or the
// QController's item panics), or the whole Runtime is killed (and a new one
// started over the committed state); the Runtime is killed between two
// steps; a watched kind re-lists; a cached kind's cache lags, so that
// cached reads are served at the older revisions the Runtime's consistency
// contract allows. A Runtime restart builds a fresh in-memory state from
// the committed state (through inmem's persistence hook) and registers new
// controllers; the world stays.
//
// # Checks
//
// After every step: the scenario's and the System's invariants over a
// read-only View of the committed state, no shared snapshot mutated (the
// state's mutation detector), no hot loop flagged by the Runtime. At the
// end: convergence within the bounds, the Final checks, no controller left
// with failing or parked items, no removed resource left, the final state
// the same as the reference run's (the same workload, every change handled
// as soon as it is made, no fault; finalizers compared as a set — their
// order is the schedule's — unless Scenario.OrderedFinalizers, labels and
// annotations as maps; Scenario.Equivalent or Canonical relax the
// comparison, NoReference turns it off), and no goroutine of the run
// left once the Runtime stopped and the world's context was canceled.
//
// # Failures
//
// A run that does not converge names what is left to do and, for every
// item or controller still failing, its last error. A run that fails a
// check is reported with its seed, the step, the check, and its
// transcript: every step, and within each the commits (by whom),
// the faults and the log lines of the Runtime and the controllers. It is
// then shrunk: workload ops, faults and schedule decisions are dropped
// while the run still fails the same check — fewest ops first, then fewest
// faults, then fewest steps — and the smallest is reported with its
// transcript and the command that replays it (-sim.replay=TOKEN). A
// scenario with a known bug (Scenario.WantFailure) passes when a run fails.
// A write fault is replayed on the write it hit (named by
// the step's actor, what the write does, and how many such writes came
// before), so that it stays there when shrinking drops other writes. Test
// prints a failure's report once (in the message it fails the test with).
//
// A failure is first checked to reproduce: the seed's run (and its
// reference run) is run again and must give the same transcript; after
// shrinking, the shrunk run's token must fail again. When either does not
// hold, the failure is reported as nondeterministic user code
// (Result.Nondeterministic), with the first step at which the two runs
// differ and their entries there, and it is not shrunk (see Determinism).
//
// # Determinism
//
// The same seed gives the same run, entry by entry, on any machine: the
// schedule, the faults and the workload come from the seed, time is the
// bubble's, and every goroutine but the one a step lets go is blocked. This
// holds as long as the controllers are deterministic themselves: the same
// inputs give the same calls in the same order. Iterating a Go map to
// write (map order is random: sort the keys), running work on goroutines of
// their own that race each other, or reading the wall clock for a
// decision breaks it; a world's notification channel must go through
// World.Relay. Replay "seed=N" twice and compare the transcripts to check.
//
// # Replay
//
// [Replay] (or -sim.replay=TOKEN, or RESGRAPH_SIM_REPLAY, which make Test
// replay instead of exploring) runs one run: the scenario, and a token
// that names the run. A token is what a [Result] gives (Result.Token:
// "s1-" and the run's schedule, faults and workload, exactly) or
// "seed=N" (the seed N as Test runs it). Replay runs it with the reference
// comparison and returns its Result without failing the test: the caller
// checks Result.Failure. A new kind of recorded run is a new token form
// decoded into a run's plan (token.go), so that every entry point stays as
// it is.
//
// # Budget
//
// Test runs seeds 1, 2, ... until the seed count or the time
// budget is reached, and log the throughput (seeds/s). The test binary's
// flags set the budget: -sim.seeds, -sim.time, -sim.seed (the first seed),
// -sim.shrinktime, and -sim.replay runs one token instead; each flag not
// given takes its environment variable (RESGRAPH_SIM_SEEDS,
// RESGRAPH_SIM_TIME, RESGRAPH_SIM_SEED, RESGRAPH_SIM_SHRINKTIME,
// RESGRAPH_SIM_REPLAY), then the Scenario's Seeds and Time, then 100 seeds
// with no time limit.
package sim
