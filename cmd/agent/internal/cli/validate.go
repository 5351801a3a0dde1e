package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

type validateOptions struct {
	IO *IOStreams

	Dir    string
	Strict bool
}

func newCmdValidate(f *Factory, runF func(context.Context, *validateOptions) error) *cobra.Command {
	opts := &validateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate [--strict] <dir>",
		Short: "Lint a skill folder you are writing",
		Long: dedent(`
			Check a skill folder the way 'agent skill add' will: the SKILL.md front
			matter (required fields, types, names, versions, unknown keys), the
			plugin path, and every script's PEP 723 block.

			Front matter that strict YAML rejects but Claude Code loads (an
			unquoted ': ', a list where text belongs, a name with spaces, no front
			matter) is read anyway; each such recovery is a warning with the fix.

			--strict checks the Agent Skills specification instead, for authors
			who publish: a lowercase hyphenated name equal to the folder name, a
			description of 1-1024 characters, compatibility of at most 500,
			metadata of strings, and no recovery used.

			Each problem is printed as file:line: message. Errors make the exit
			status 1; warnings alone do not. Nothing is built or run.

			Guide: docs/writing-skills.md.
		`),
		Example: dedent(`
			$ agent skill validate ./my-skill
			$ agent skill validate --strict .
		`),
		Args: exactArgs(1, "the <dir> of a skill (the folder holding SKILL.md)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return validateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "check the Agent Skills specification: no recovery, spec name and lengths")
	return cmd
}

func validateRun(_ context.Context, opts *validateOptions) error {
	fi, err := os.Stat(opts.Dir)
	if err != nil {
		return fmt.Errorf("validate %s: %w", opts.Dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("validate %s: not a directory; give the folder that holds SKILL.md", opts.Dir)
	}
	errs, warns, name := lintSkill(opts.Dir, opts.Strict)
	w := opts.IO.Out
	for _, p := range errs {
		fmt.Fprintf(w, "%s\n", workspace.EscapeTerminal(p.String()))
	}
	for _, p := range warns {
		fmt.Fprintf(w, "%s (warning)\n", workspace.EscapeTerminal(p.String()))
	}
	if len(errs) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "%s: %d error(s), %d warning(s)\n", opts.Dir, len(errs), len(warns))
		return errSilent
	}
	if opts.Strict {
		fmt.Fprintf(w, "ok: %s follows the Agent Skills specification (%d warning(s))\n", name, len(warns))
		return nil
	}
	fmt.Fprintf(w, "ok: %s is a valid skill (%d warning(s))\n", name, len(warns))
	return nil
}

// lintSkill collects errors and warnings about a skill folder. strict adds
// the Agent Skills specification's rules as errors; the recoveries it
// reports are then not repeated as warnings.
func lintSkill(dir string, strict bool) (errs, warns []manifest.Problem, name string) {
	m, warnings, err := gitsrc.LoadManifest(dir)
	for _, w := range warnings {
		if !strict || !w.Recovered {
			warns = append(warns, w)
		}
	}
	if err != nil {
		var me *manifest.ManifestError
		if errors.As(err, &me) {
			return me.Problems, warns, ""
		}
		return []manifest.Problem{{File: filepath.Join(dir, manifest.ManifestFile), Message: err.Error()}}, warns, ""
	}
	file := gitsrc.ManifestPath(dir)
	if strict {
		folder := filepath.Base(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			folder = filepath.Base(abs)
		}
		errs = append(errs, manifest.CheckStrict(file, folder, m, warnings)...)
	}
	if m.Plugin != nil {
		switch {
		case m.Plugin.Build != "":
			pkg, err := install.BuildPackage(m.Plugin.Build)
			if err == nil {
				if fi, statErr := os.Stat(filepath.Join(dir, pkg)); statErr != nil || !fi.IsDir() {
					err = fmt.Errorf("plugin.build %q is not a folder in the skill; point it at the Go main package, for example ./plugin", m.Plugin.Build)
				} else if abs, absErr := filepath.Abs(dir); absErr == nil {
					if _, modErr := plugbuild.ModuleRoot(abs, filepath.Join(abs, pkg)); modErr != nil {
						err = fmt.Errorf("plugin.build %q has no go.mod in the skill: a plugin is a Go module of its own that requires %s ('agent skill init --plugin <dir>' shows one)", m.Plugin.Build, sdkmod.SDKPath)
					}
				}
			}
			if err != nil {
				errs = append(errs, manifest.Problem{File: file, Message: err.Error()})
			}
		case m.Plugin.Command != "":
			if _, err := install.CommandPath(dir, m.Plugin.Command); err != nil {
				errs = append(errs, manifest.Problem{File: file, Message: err.Error()})
			}
		}
	}
	scripts, err := exec.Discover(dir, m.Scripts, m.ScriptsIgnore)
	if err != nil {
		errs = append(errs, manifest.Problem{File: file, Message: "scripts: " + err.Error()})
	}
	for _, s := range scripts {
		if s.Err != nil {
			errs = append(errs, manifest.Problem{File: s.Path, Message: s.Err.Error()})
		}
	}
	manifest.SortProblems(errs)
	return errs, warns, m.Name
}
