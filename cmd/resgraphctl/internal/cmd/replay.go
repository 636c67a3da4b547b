package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/pkg/recording"
)

func newReplay(a *app) *cobra.Command {
	var (
		printOnly bool
		dir       string
	)
	c := &cobra.Command{
		Use:   "replay FILE [-- GO-TEST-FLAGS...]",
		Short: "Replay a recording in the simulator, with the daemon's own scenario",
		Long: `Replay a recording (resgraphctl record) in resgraph's simulator: the daemon's
controllers over fakes of its world start from the recorded state, the
recorded changes come at their recorded times, and the simulator explores
orderings and faults around them; a failure is shrunk to the fewest
recorded changes that still fail, and reported with a command that replays
it exactly.

The recording names the command that replays it (the daemon's simulation
test, as its developers wrote it); replay runs that command with FILE, in
--dir (default: the current directory, which should be the daemon's source
tree), and exits with its status. Flags after -- are added to it (for
example -sim.replay=TOKEN, to replay one shrunk run). The command is
printed first, on the standard error; it comes from the file, so replay
only recordings you trust (--print shows it without running it). Replay
does not talk to the daemon.`,
		Example: `  resgraphctl replay incident.rgrec
  resgraphctl replay incident.rgrec --print
  resgraphctl replay incident.rgrec -- -sim.seeds=500`,
		GroupID: groupDaemon,
		Args: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n == 0 || n > 1 || n < 0 && len(args) != 1 {
				return usageErr(errorf("replay: want FILE [-- GO-TEST-FLAGS...], got %d argument(s) before --", max(n, len(args))))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.replay(cmd.Context(), args[0], args[1:], dir, printOnly)
		},
	}
	c.Flags().BoolVar(&printOnly, "print", false, "print the command that replays FILE, and do not run it")
	c.Flags().StringVar(&dir, "dir", ".", "run the command in `DIR` (the daemon's source tree)")
	return c
}

// replay runs (or prints) the recording's replay command.
func (a *app) replay(ctx context.Context, file string, extra []string, dir string, printOnly bool) error {
	line, err := replayCommand(file, extra)
	if err != nil {
		return err
	}
	if printOnly {
		_, err := fmt.Fprintln(a.stdout, line)
		return err
	}
	if err := inSourceTree(line, dir); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(a.stderr, "resgraphctl: replaying %s in %s: %s\n", file, dir, line)
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, a.stdout, a.stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return errorf("the replay failed (%s): see its report above", exit)
	}
	return err
}

// replayCommand is the recording's replay command with FILE as an
// absolute path (the command may run elsewhere: go test runs a test in
// its package's directory) and the extra flags, each quoted for sh.
func replayCommand(file string, extra []string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	rec, err := recording.CheckFrames(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if rec.Replay == "" {
		return "", errorf("%s names no command that replays it (its daemon did not set one: recording.WithReplayCommand)", file)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	line := strings.ReplaceAll(rec.Replay, "FILE", shellQuote(abs))
	for _, x := range extra {
		line += " " + shellQuote(x)
	}
	return line, nil
}

// shellQuote quotes s for sh when it holds anything but plain
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// inSourceTree checks, before anything runs, that the relative package
// paths a "go" command names ("./cmd/demo/internal/controllers") are in
// dir: replay run outside the daemon's source tree would otherwise fail
// in go's words ("go.mod file not found") and be reported as a failed
// replay.
func inSourceTree(line, dir string) error {
	words := strings.Fields(line)
	if len(words) == 0 || words[0] != "go" {
		return nil
	}
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "./") {
			continue
		}
		path := filepath.Join(dir, strings.TrimSuffix(w, "/..."))
		if _, err := os.Stat(path); err != nil {
			abs, _ := filepath.Abs(dir)
			return errorf("the recording's replay command runs %s, which is not in %s: run replay from the daemon's source tree, or name it with --dir", w, abs)
		}
	}
	return nil
}
