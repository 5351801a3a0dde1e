//go:build !notrace

package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/internal/telemetry"
)

// flushTimeout bounds the wait for the exporter at exit: a collector that
// is down must not hold the command up for long.
const flushTimeout = 5 * time.Second

// commandTrace is the tracing of one command line: the provider and the
// command's own span, nil when tracing is off.
type commandTrace struct {
	provider *telemetry.Provider
	span     trace.Span
}

// startTracing sets tracing up from the OTEL_* environment (SPEC §17) and
// starts the span of the command that args run. `agent mcp` gets no command
// span, so that each request it serves is a trace of its own; `agent
// __plugin` none at all (a built-in plugin traces through the SDK), nor
// `agent trace`, which would otherwise draw itself as the last trace.
func startTracing(ctx context.Context, f *Factory, root *cobra.Command, args []string) (context.Context, *commandTrace) {
	cmd, _, findErr := root.Find(args)
	if findErr == nil && (cmd.Name() == "__plugin" || cmd.Name() == "trace" && cmd.Parent() == root) {
		return ctx, nil
	}
	if !telemetry.Wanted(f.LookupEnv) {
		telemetry.Start(ctx, telemetry.Options{LookupEnv: f.LookupEnv}) // the propagator alone
		return ctx, nil
	}
	opts := telemetry.Options{Version: Version, LookupEnv: f.LookupEnv}
	if cfg, err := f.Config(); err == nil {
		opts.Home = cfg.Home
	}
	p, err := telemetry.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "agent: tracing is off: %v\n", err)
		return ctx, nil
	}
	ct := &commandTrace{provider: p}
	if findErr != nil || cmd.Name() == "mcp" {
		return ctx, ct
	}
	path := cmd.CommandPath()
	ctx, ct.span = otel.Tracer(telemetry.ScopeName).Start(ctx, path,
		trace.WithAttributes(semconv.AgentCommand.String(path)))
	return ctx, ct
}

// end ends the command's span with its exit code and flushes every span.
func (ct *commandTrace) end(f *Factory, code int, err error) {
	if ct == nil {
		return
	}
	if ct.span != nil {
		ct.span.SetAttributes(semconv.ProcessExitCode.Int(code))
		if code != 0 {
			ct.span.SetAttributes(semconv.ErrorType.String(fmt.Sprintf("exit_%d", code)))
			msg := ""
			if err != nil {
				msg, _, _ = strings.Cut(err.Error(), "\n")
			}
			ct.span.SetStatus(codes.Error, msg)
		}
		ct.span.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := ct.provider.Shutdown(ctx); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "agent: %v\n", err)
	}
}
