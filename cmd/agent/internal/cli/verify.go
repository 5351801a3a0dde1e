package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/registry"
)

type verifyOptions struct {
	IO     *IOStreams
	Store  func() (*registry.Store, error)
	Placer placer

	Names []string
	JSON  bool
}

func newCmdVerify(f *Factory, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IO, Store: f.Store, Placer: f.placements}
	cmd := &cobra.Command{
		Use:   "verify [name...]",
		Short: "Check that installed skills' files are as they were installed",
		Long: dedent(`
			Recompute the h1: hash of each installed skill's folder (every file is
			read again) and compare it with the hash recorded at add, update and
			trust. Lists the files that changed, were added or were removed, and
			exits 1 if any skill changed. With no name, every installed skill is
			checked.

			A changed skill is refused at its first use (plugin launch, use_skill,
			script run) with the error skill_tampered. To discard local changes,
			remove the skill and add it again, or update it once a new commit
			exists. __pycache__ folders are not part of the hash.

			The skill's placements in other agents' folders (add --agent) are
			checked too: each copy against the installed files, naming every
			changed one, and each link against its target. 'agent skill trust
			<name>' or 'agent skill sync' places a changed copy again.

			Guide: docs/security.md.
		`),
		Example: dedent(`
			$ agent skill verify
			$ agent skill verify weather --json
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// Statuses of a verified skill.
const (
	verifyOK          = "ok"
	verifyChanged     = "changed"
	verifyNotRecorded = "not_recorded"
	// verifyPlacementChanged: the install is intact, a placement is not.
	verifyPlacementChanged = "placement_changed"
)

type verifyResult struct {
	Name    string   `json:"name"`
	Status  string   `json:"status"`
	DirHash string   `json:"dir_hash,omitempty"`
	Got     string   `json:"got,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Placements are the copies in other agents' folders (SPEC §19).
	Placements []placement.Check `json:"placements,omitempty"`
}

func verifyRun(ctx context.Context, opts *verifyOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	var entries []registry.Entry
	if len(opts.Names) == 0 {
		if entries, err = store.List(); err != nil {
			return err
		}
	} else {
		for _, n := range opts.Names {
			e, err := store.Get(n)
			if err != nil {
				return err
			}
			entries = append(entries, e)
		}
	}
	results := make([]verifyResult, 0, len(entries))
	failed := false
	for _, e := range entries {
		c, recorded, err := store.Verify(e, true)
		if err != nil {
			return err
		}
		r := verifyResult{Name: e.Canonical, DirHash: e.DirHash, Status: verifyOK}
		switch {
		case !recorded:
			r.Status = verifyNotRecorded
		case !c.Empty():
			failed = true
			r.Status, r.Got = verifyChanged, c.Got
			r.Changed, r.Added, r.Removed = c.Changed, c.Added, c.Removed
		}
		if len(e.Placements) > 0 {
			m, err := opts.Placer(store)
			if err != nil {
				return err
			}
			r.Placements = m.Verify(e)
			for _, c := range r.Placements {
				if !c.OK() {
					failed = true
					if r.Status == verifyOK {
						r.Status = verifyPlacementChanged
					}
				}
			}
		}
		results = append(results, r)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, results); err != nil {
			return err
		}
	} else {
		printVerify(opts.IO, results)
	}
	if failed {
		return errSilent
	}
	return nil
}

func printVerify(ios *IOStreams, results []verifyResult) {
	if len(results) == 0 {
		fmt.Fprintln(ios.ErrOut, "No skills installed.")
		return
	}
	w := ios.Out
	for _, r := range results {
		switch r.Status {
		case verifyOK, verifyPlacementChanged:
			fmt.Fprintf(w, "%s: ok (%s)\n", r.Name, r.DirHash)
		case verifyNotRecorded:
			fmt.Fprintf(w, "%s: no hash recorded (installed by an older agent); remove it and add it again to record one\n", r.Name)
		case verifyChanged:
			fmt.Fprintf(w, "%s: CHANGED since install\n", r.Name)
			for _, p := range r.Changed {
				fmt.Fprintf(w, "  changed  %s\n", p)
			}
			for _, p := range r.Added {
				fmt.Fprintf(w, "  added    %s\n", p)
			}
			for _, p := range r.Removed {
				fmt.Fprintf(w, "  removed  %s\n", p)
			}
			if len(r.Changed)+len(r.Added)+len(r.Removed) == 0 {
				fmt.Fprintf(w, "  the folder hash is %s, installed %s (no per-file record to name the files)\n", r.Got, r.DirHash)
			}
		}
		for _, c := range r.Placements {
			if c.OK() {
				fmt.Fprintf(w, "  placed   %s: ok\n", c.Path)
				continue
			}
			what := c.Problem
			if what == "" {
				what = "CHANGED since placed"
			}
			fmt.Fprintf(w, "  placed   %s: %s\n", c.Path, what)
			for _, f := range c.Changes.Files() {
				fmt.Fprintf(w, "    %s\n", f)
			}
		}
	}
	for _, r := range results {
		if r.Status == verifyPlacementChanged {
			fmt.Fprintf(ios.ErrOut, "To place %s again as installed: agent skill trust %s\n", r.Name, r.Name)
		}
		if r.Status == verifyChanged {
			fmt.Fprintf(ios.ErrOut, "To discard the changes to %s: agent skill remove %s --yes, then add it again (or agent skill update %s once a new commit exists)\n", r.Name, r.Name, r.Name)
		}
	}
}
