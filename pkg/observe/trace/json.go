package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// eventJSON is the JSON form of an Event: lowerCamelCase keys, zero
// fields left out, the type and outcome by name, durations in
// nanoseconds.
type eventJSON struct {
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time,omitzero"`
	Type       string    `json:"type"`
	Controller string    `json:"controller,omitempty"`
	Op         string    `json:"op,omitempty"`
	Resource   *Ref      `json:"resource,omitempty"`
	Cause      *Ref      `json:"cause,omitempty"`
	Causes     uint32    `json:"causes,omitempty"`
	Worker     uint32    `json:"worker,omitempty"`
	Outcome    string    `json:"outcome,omitempty"`
	Attempt    uint32    `json:"attempt,omitempty"`
	Due        time.Time `json:"due,omitzero"`
	DurationNs int64     `json:"durationNs,omitempty"`
	Error      string    `json:"error,omitempty"`
	Detail     string    `json:"detail,omitempty"`
}

func refToJSON(r Ref) *Ref {
	if r.IsZero() {
		return nil
	}
	return &r
}

func refFromJSON(j *Ref) Ref {
	if j == nil {
		return Ref{}
	}
	return *j
}

// MarshalJSON writes the record as one JSON object: {"seq", "time",
// "type", "controller", "op", "resource": {"namespace", "type", "id",
// "version", "writer"}, "cause": {...}, "causes", "worker", "outcome",
// "attempt", "due", "durationNs", "error", "detail"}, leaving out the
// fields the record does not set.
func (e Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // names are shown as they are; pages escape
	err := enc.Encode(eventJSON{
		Seq: e.Seq, Time: e.Time, Type: e.Type.String(), Controller: e.Controller, Op: e.Op,
		Resource: refToJSON(e.Resource), Cause: refToJSON(e.Cause), Causes: e.Causes, Worker: e.Worker,
		Outcome: e.Outcome.String(), Attempt: e.Attempt, Due: e.Due, DurationNs: int64(e.Duration),
		Error: e.Error, Detail: e.Detail,
	})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// UnmarshalJSON reads what MarshalJSON writes; an unknown type or outcome
// is an error.
func (e *Record) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, err := ParseType(j.Type)
	if err != nil {
		return err
	}
	o, err := ParseOutcome(j.Outcome)
	if err != nil {
		return err
	}
	*e = Record{
		Seq: j.Seq, Time: j.Time, Type: t, Controller: j.Controller, Op: j.Op,
		Resource: refFromJSON(j.Resource), Cause: refFromJSON(j.Cause), Causes: j.Causes, Worker: j.Worker,
		Outcome: o, Attempt: j.Attempt, Due: j.Due, Duration: time.Duration(j.DurationNs),
		Error: j.Error, Detail: j.Detail,
	}
	return nil
}

// WriteJSONLines writes records as JSON lines: one record per line, as
// [Record.MarshalJSON] writes it. It returns the first write error.
func WriteJSONLines(w io.Writer, records []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range records {
		if err := enc.Encode(records[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadJSONLines reads records written by [WriteJSONLines] (blank lines are
// skipped). A line that is not a record is an error naming the line.
func ReadJSONLines(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var ev Record
		if err := json.Unmarshal(b, &ev); err != nil {
			return out, fmt.Errorf("trace: line %d: %w", line, err)
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
