package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/recording"
)

func newRecord(a *app) *cobra.Command {
	var (
		recordFor time.Duration
		out       string
	)
	c := &cobra.Command{
		Use:   "record -o FILE",
		Short: "Write a recording of the daemon (its flight recorder) to a file",
		Long: `Ask the daemon's flight recorder for a recording and write it to FILE: the
state of the daemon's resources at a starting point and every change after
it — each marked as made by one of its controllers, by an outside writer,
or by the world — which the simulator replays (resgraphctl replay FILE).

Without --for it is what the recorder holds now (its window: the last ten
minutes by default). With --for it records from now for that long, and
returns when the time is up. The file is written only once the whole
recording arrived; a recording cut short writes nothing.`,
		Example: `  resgraphctl record --for 5m -o incident.rgrec
  resgraphctl record -o now.rgrec
  resgraphctl replay incident.rgrec`,
		GroupID: groupDaemon,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageErr(errorf("-o is required: the FILE to write the recording to"))
			}
			if recordFor < 0 || recordFor > recording.MaxRecordFor {
				return usageErr(errorf("--for %s: want a duration up to %s (none: what the recorder holds now)", recordFor, recording.MaxRecordFor))
			}
			return a.record(cmd.Context(), recordFor, out)
		},
	}
	c.Flags().DurationVar(&recordFor, "for", 0, "record from now for this `DURATION` (default: what the recorder holds now)")
	c.Flags().StringVarP(&out, "output", "o", "", "write the recording to `FILE`")
	return c
}

// record writes the daemon's recording to out through a temporary file
// beside it, renamed once the recording arrived whole. The temporary file
// is made before the daemon is asked: an -o that cannot be written is
// said at once, naming -o, not after --for.
func (a *app) record(ctx context.Context, d time.Duration, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return errorf("cannot write the recording to %s: %s: %w", out, filepath.Dir(out), err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	fc, err := a.flight()
	if err != nil {
		_ = tmp.Close()
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d+a.requestTimeout)
	defer cancel()
	sum, err := fc.Record(ctx, d, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	return a.printRecorded(sum, out)
}

// printRecorded says what the recording holds, and what it may lack.
func (a *app) printRecorded(sum obsremote.RecordingSummary, out string) error {
	_, err := fmt.Fprintf(a.stdout, "recorded %s of %s (%s): %d resources at the start, %d changes (%d by outside writers or the world), %d bytes, written to %s\n",
		sum.End.Sub(sum.Start).Round(time.Millisecond), sum.Source, sum.Reason, sum.Initial, sum.Changes, sum.Outside, sum.Size, out)
	if err != nil {
		return err
	}
	if !sum.Requested.IsZero() && sum.Start.After(sum.Requested) {
		_, _ = fmt.Fprintf(a.stdout, "note: it starts %s later than asked: the recorder's window had let go of the beginning\n", sum.Start.Sub(sum.Requested).Round(time.Millisecond))
	}
	if sum.Coalesced > 0 {
		_, _ = fmt.Fprintf(a.stdout, "note: %d changes were seen merged with later ones (the recorder fell behind): a replay cannot match it commit for commit\n", sum.Coalesced)
	}
	if sum.Replay != "" {
		_, _ = fmt.Fprintf(a.stdout, "replay it: resgraphctl replay %s\n", out)
	}
	return nil
}
