package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// Format is an output format of -o.
type Format string

// The output formats.
const (
	Table Format = "table"
	Wide  Format = "wide"
	YAMLF Format = "yaml"
	JSONF Format = "json"
)

// Formats lists the formats, for a flag's help and completion.
var Formats = []string{string(Table), string(Wide), string(YAMLF), string(JSONF)}

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	if slices.Contains(Formats, s) {
		return Format(s), nil
	}
	return "", fmt.Errorf("-o %q: want one of %s", s, strings.Join(Formats, ", "))
}

// Options configure a [Printer].
type Options struct {
	Format Format
	// Definition is the type's definition: its printed columns, whether
	// it is sensitive.
	Definition definition.Definition
	// ShowSensitive prints a sensitive type's spec and columns.
	ShowSensitive bool
	// Now is the time ages are counted to (the zero time: time.Now()).
	Now time.Time
}

// Printer prints resources of one type. A table's header is printed once;
// its columns widen as wider values come (a watch's rows stay aligned
// unless a value is wider than every one before it).
type Printer struct {
	w      io.Writer
	o      Options
	widths []int
	header bool
	docs   int
}

// New returns a printer to w.
func New(w io.Writer, o Options) *Printer { return &Printer{w: w, o: o} }

// Item is one resource to print, with its watch event ("" outside a
// watch).
type Item struct {
	Event    string
	Resource resource.Resource
}

// Print prints items: table rows aligned with each other (and the rows
// printed before), or one document each. withEvent adds the EVENT column
// of a watch to a table.
func (p *Printer) Print(items []Item, withEvent bool) error {
	switch p.o.Format {
	case YAMLF, JSONF:
		return p.documents(items)
	}
	rows := make([][]string, 0, len(items)+1)
	if !p.header {
		rows = append(rows, p.headers(withEvent))
	}
	for _, it := range items {
		row, err := p.row(it.Resource)
		if err != nil {
			return err
		}
		if withEvent {
			row = append([]string{it.Event}, row...)
		}
		rows = append(rows, row)
	}
	p.header = true
	return p.writeRows(rows)
}

func (p *Printer) documents(items []Item) error {
	for _, it := range items {
		var b []byte
		var err error
		if p.o.Format == YAMLF {
			b, err = YAML(it.Resource, p.o.Definition, p.o.ShowSensitive, it.Event)
			if p.docs > 0 {
				b = append([]byte("---\n"), b...)
			}
		} else {
			b, err = JSON(it.Resource, p.o.Definition, p.o.ShowSensitive, it.Event)
		}
		if err != nil {
			return err
		}
		if _, err := p.w.Write(b); err != nil {
			return err
		}
		p.docs++
	}
	return nil
}

func (p *Printer) headers(withEvent bool) []string {
	var h []string
	if withEvent {
		h = append(h, "EVENT")
	}
	if p.o.Format == Wide {
		h = append(h, "NAMESPACE", "TYPE", "ID", "VERSION", "PHASE", "OWNER")
	} else {
		h = append(h, "NAMESPACE", "ID", "VERSION", "PHASE")
	}
	for _, c := range p.o.Definition.Columns {
		h = append(h, strings.ToUpper(c.Name))
	}
	if p.o.Format == Wide {
		h = append(h, "LABELS", "FINALIZERS")
	}
	return append(h, "AGE")
}

func (p *Printer) row(r resource.Resource) ([]string, error) {
	md := r.Metadata()
	var row []string
	if p.o.Format == Wide {
		row = append(row, md.Namespace(), md.Type(), md.ID(), md.Version().String(), md.Phase().String(), orNone(md.Owner()))
	} else {
		row = append(row, md.Namespace(), md.ID(), md.Version().String(), md.Phase().String())
	}
	cols, err := p.columns(r)
	if err != nil {
		return nil, err
	}
	row = append(row, cols...)
	if p.o.Format == Wide {
		row = append(row, orNone(labelsText(md.Labels())), orNone(strings.Join(*md.Finalizers(), ",")))
	}
	return append(row, p.age(md.Created())), nil
}

// columns returns the values of the type's printed columns for r.
func (p *Printer) columns(r resource.Resource) ([]string, error) {
	def := p.o.Definition
	if len(def.Columns) == 0 {
		return nil, nil
	}
	out := make([]string, len(def.Columns))
	if hidden(def, p.o.ShowSensitive) {
		for i := range out {
			out[i] = "<hidden>"
		}
		return out, nil
	}
	spec, err := Spec(r)
	if err != nil {
		return nil, err
	}
	for i, c := range def.Columns {
		out[i] = orNone(cell(c, spec))
	}
	return out, nil
}

// cell is a column's value in a table: a list of strings, numbers or
// booleans as its elements joined by commas, anything else as the
// column's Value.
func cell(c definition.Column, spec any) string {
	p, err := definition.ParsePath(c.Path)
	if err != nil {
		return c.Value(spec)
	}
	v, _ := p.Lookup(spec)
	items, ok := v.([]any)
	if !ok {
		return c.Value(spec)
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		switch x := it.(type) {
		case string:
			parts = append(parts, x)
		case json.Number, bool:
			parts = append(parts, fmt.Sprint(x))
		default:
			return c.Value(spec)
		}
	}
	return strings.Join(parts, ",")
}

func labelsText(l *resource.Labels) string {
	raw := l.Raw()
	parts := make([]string, 0, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		parts = append(parts, k+"="+raw[k])
	}
	return strings.Join(parts, ",")
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age formats the time since t as kubectl does: 42s, 5m, 3h, 12d.
func (p *Printer) age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	now := p.o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return Age(now.Sub(t))
}

// Age formats a duration the way a table's AGE column does.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < 2*time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// writeRows writes rows aligned with the rows printed before.
func (p *Printer) writeRows(rows [][]string) error {
	var err error
	p.widths, err = WriteRows(p.w, rows, p.widths)
	return err
}

// WriteRows writes rows with columns three spaces apart, each padded to
// the widest of its values and of widths (the widths of rows written
// before, or nil); it returns the widths now.
func WriteRows(w io.Writer, rows [][]string, widths []int) ([]int, error) {
	for _, row := range rows {
		for i, v := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(v))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, v := range row {
			b.WriteString(v)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len(v)+3))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return widths, err
}
