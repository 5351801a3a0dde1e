//go:build notrace

package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// With the notrace tag agent links no tracing set-up: the baseline that
// docs/benchmarks.md measures tracing-off against.

type commandTrace struct{}

func startTracing(ctx context.Context, _ *Factory, _ *cobra.Command, _ []string) (context.Context, *commandTrace) {
	return ctx, nil
}

func (*commandTrace) end(*Factory, int, error) {}
