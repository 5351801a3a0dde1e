package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/ground/platform"
)

// Version is the semver that SKILL.md compatibility fields are checked
// against, and Commit the source it was built from. Release builds (make
// release) stamp both with -ldflags "-X ...cli.Version=x.y.z -X
// ...cli.Commit=<sha>"; without a stamp Commit falls back to what go
// build recorded, if anything.
var Version = "0.1.0"

var Commit = ""

// commit returns Commit, else the VCS revision in the build info, else
// "unknown" (GOFLAGS=-buildvcs=false records none).
func commit() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// platformName is GOOS/GOARCH, marked when the portable tag selected the
// fallbacks of other systems.
func platformName() string {
	p := runtime.GOOS + "/" + runtime.GOARCH
	if platform.Portable {
		p += " (portable)"
	}
	return p
}

// versionText is what agent version and agent --version print: the version
// alone on the first line, for scripts, then the commit and platform.
func versionText() string {
	return fmt.Sprintf("%s\ncommit: %s\nplatform: %s\n", Version, commit(), platformName())
}

type versionOptions struct{ IO *IOStreams }

func newCmdVersion(f *Factory, runF func(context.Context, *versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agent version (used for skill compatibility checks), commit and platform",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return versionRun(cmd.Context(), opts)
		},
	}
}

func versionRun(_ context.Context, opts *versionOptions) error {
	_, err := fmt.Fprint(opts.IO.Out, versionText())
	return err
}
