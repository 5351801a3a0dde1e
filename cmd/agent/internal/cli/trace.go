package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/telemetry"
)

type traceOptions struct {
	IO   *IOStreams
	Home func() (string, error)

	Last int
	ID   string
	JSON bool
}

func newCmdTrace(f *Factory, runF func(context.Context, *traceOptions) error) *cobra.Command {
	opts := &traceOptions{IO: f.IO, Home: func() (string, error) {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		return cfg.Home, nil
	}}
	cmd := &cobra.Command{
		Use:   "trace [<trace-id>]",
		Short: "Draw recent traces as a tree with durations",
		Long: dedent(`
			Draw the traces that OTEL_TRACES_EXPORTER=file wrote under
			$AGENT_HOME/traces/: each span on a line, under its parent, with how
			long it took and when it started after the trace did. A person sees
			where the time went without running a collector.

			With a trace ID (or the start of one) draws that trace; otherwise the
			last --last traces, oldest first. --json prints the spans instead.

			Guide: docs/traces.md.
		`),
		Example: dedent(`
			$ export OTEL_TRACES_EXPORTER=file
			$ agent call hello.greet '{"name": "Ada"}'
			$ agent trace
			$ agent trace --last 3
			$ agent trace 4bf92f35
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr(fmt.Errorf("%s takes at most one trace ID; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if opts.Last < 1 {
				return usageErr(fmt.Errorf("--last must be 1 or more, got %d", opts.Last))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return traceRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Last, "last", 1, "how many of the newest traces to draw")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the spans as JSON")
	return cmd
}

func traceRun(_ context.Context, opts *traceOptions) error {
	home, err := opts.Home()
	if err != nil {
		return err
	}
	dir := telemetry.TracesDir(home)
	traces, err := telemetry.ReadTraces(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(traces) == 0 {
		return fmt.Errorf("no traces in %s; run a command with OTEL_TRACES_EXPORTER=file set, then agent trace", dir)
	}
	if err != nil {
		return err
	}
	if opts.ID != "" {
		t, err := findTrace(traces, opts.ID)
		if err != nil {
			return err
		}
		traces = []telemetry.Trace{t}
	} else if len(traces) > opts.Last {
		traces = traces[len(traces)-opts.Last:]
	}
	if opts.JSON {
		var spans []telemetry.Span
		for _, t := range traces {
			spans = append(spans, t.Spans...)
		}
		return writeJSON(opts.IO.Out, spans)
	}
	for i, t := range traces {
		if i > 0 {
			fmt.Fprintln(opts.IO.Out)
		}
		drawTrace(opts.IO.Out, t)
	}
	return nil
}

func findTrace(traces []telemetry.Trace, id string) (telemetry.Trace, error) {
	id = strings.ToLower(id)
	var found []telemetry.Trace
	for _, t := range traces {
		if strings.HasPrefix(t.ID, id) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return telemetry.Trace{}, fmt.Errorf("no trace %s among the %d under $AGENT_HOME/traces; see 'agent trace --last %d'", id, len(traces), len(traces))
	default:
		return telemetry.Trace{}, usageErr(fmt.Errorf("%d traces start with %s; give more of the ID", len(found), id))
	}
}

// drawTrace prints a trace's spans as a tree: each line the span's name,
// its duration, and its start after the trace's start. A span whose parent
// is not in the trace (a caller's span, or one lost with a killed process)
// is drawn as a root.
func drawTrace(w io.Writer, t telemetry.Trace) {
	ids := map[string]bool{}
	for _, s := range t.Spans {
		ids[s.SpanID] = true
	}
	children := map[string][]telemetry.Span{}
	var roots []telemetry.Span
	for _, s := range t.Spans {
		if s.ParentID != "" && ids[s.ParentID] && s.ParentID != s.SpanID {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	start := t.Start()
	end := start
	for _, s := range t.Spans {
		if s.End.After(end) {
			end = s.End
		}
	}
	fmt.Fprintf(w, "trace %s  %s  %s\n", t.ID, start.Local().Format("2006-01-02 15:04:05"), fmtDur(end.Sub(start)))
	type line struct {
		text string
		s    telemetry.Span
	}
	var lines []line
	seen := map[string]bool{}
	var walk func(s telemetry.Span, prefix, branch string)
	walk = func(s telemetry.Span, prefix, branch string) {
		if seen[s.SpanID] {
			return // a cycle in a hand-edited file
		}
		seen[s.SpanID] = true
		lines = append(lines, line{prefix + branch + spanLabel(s), s})
		kids := children[s.SpanID]
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, k := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(k, next, b)
		}
	}
	for _, r := range roots {
		walk(r, "", "")
	}
	width := 0
	for _, l := range lines {
		width = max(width, len([]rune(l.text)))
	}
	for _, l := range lines {
		pad := strings.Repeat(" ", width-len([]rune(l.text)))
		fmt.Fprintf(w, "%s%s  %9s  +%s\n", l.text, pad, fmtDur(l.s.Duration()), fmtDur(l.s.Start.Sub(start)))
	}
}

var spanNotes = []struct{ key, short string }{
	{"gen_ai.skill.name", "skill"},
	{"agent.plugin.start", "start"},
	{"agent.plugin.launch", "launch"},
	{"process.exit.code", "exit"},
	{"gen_ai.usage.input_tokens", "in"},
	{"gen_ai.usage.output_tokens", "out"},
}

// spanLabel is a span's name with what a reader looks for first: the
// skill, a plugin's start, a script's exit code, the error.
func spanLabel(s telemetry.Span) string {
	label := s.Name
	var notes []string
	for _, n := range spanNotes {
		if v, ok := s.Attrs[n.key]; ok {
			notes = append(notes, n.short+"="+fmt.Sprint(v))
		}
	}
	if s.Status == "error" {
		e := "error"
		if v, ok := s.Attrs["error.type"]; ok {
			e = fmt.Sprintf("error=%v", v)
		}
		notes = append(notes, e)
	}
	if len(notes) > 0 {
		slices.Sort(notes)
		label += " [" + strings.Join(notes, " ") + "]"
	}
	return label
}

// fmtDur rounds a duration for reading: 3 significant digits at most.
func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}
