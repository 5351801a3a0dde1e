package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// testFactory is a Factory over buffers with the given environment.
func testFactory(t *testing.T, env map[string]string) (f *Factory, out, errOut *bytes.Buffer) {
	t.Helper()
	ios, _, out, errOut := TestIO()
	f = &Factory{
		IO:         ios,
		LookupEnv:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ:    func() []string { return nil },
		Executable: os.Executable,
	}
	return f, out, errOut
}

func TestDedent(t *testing.T) {
	t.Parallel()
	got := dedent(`
		first
		  indented

		last
	`)
	want := "first\n  indented\n\nlast"
	if got != want {
		t.Fatalf("dedent = %q, want %q", got, want)
	}
}

func TestShortSHA(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"full", "0123456789abcdef", "0123456"},
		{"short", "abc", "abc"},
		{"empty", "", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shortSHA(tc.in); got != tc.want {
				t.Fatalf("shortSHA(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSourceFromArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, ref, version string
		wantRef, wantConstraint string
		wantUsage               bool
		wantErr                 error
	}{
		{name: "constraint after @", raw: "https://example.com/r.git@^1", wantConstraint: "^1"},
		{name: "tag after @", raw: "https://example.com/r.git@v1.2.0", wantRef: "v1.2.0"},
		{name: "ref flag", raw: "https://example.com/r.git", ref: "main", wantRef: "main"},
		{name: "version flag", raw: "https://example.com/r.git", version: ">=1, <2", wantConstraint: ">=1, <2"},
		{name: "both flags", raw: "x", ref: "main", version: "^1", wantUsage: true},
		{name: "flag and @", raw: "https://example.com/r.git@^1", ref: "main", wantUsage: true},
		{name: "ext transport", raw: "ext::sh -c id", wantErr: gitsrc.ErrUnsupportedSource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, err := sourceFromArgs(tc.raw, tc.ref, tc.version)
			var ue *usageError
			switch {
			case tc.wantUsage:
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if src.Ref != tc.wantRef || src.Constraint != tc.wantConstraint {
				t.Fatalf("ref, constraint = %q, %q; want %q, %q", src.Ref, src.Constraint, tc.wantRef, tc.wantConstraint)
			}
		})
	}
}

func TestCommandPath(t *testing.T) {
	t.Parallel()
	skill := t.TempDir()
	outside := filepath.Join(t.TempDir(), "evil")
	mustWrite(t, outside, "#!/bin/sh\n", 0o755)
	mustWrite(t, filepath.Join(skill, "bin", "tool"), "#!/bin/sh\n", 0o755)
	mustWrite(t, filepath.Join(skill, "bin", "data"), "not executable", 0o644)
	if err := os.Symlink(outside, filepath.Join(skill, "bin", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(skill, "dirlink")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, rel string
		ok        bool
	}{
		{"executable inside", "bin/tool", true},
		{"not executable", "bin/data", false},
		{"symlink to outside", "bin/link", false},
		{"through a symlinked dir", "dirlink/evil", false},
		{"parent path", "../evil", false},
		{"absolute", outside, false},
		{"missing", "bin/nope", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := install.CommandPath(skill, tc.rel)
			if tc.ok != (err == nil) {
				t.Fatalf("commandPath(%q) = %q, %v; want ok=%v", tc.rel, p, err, tc.ok)
			}
			if err != nil && !errors.Is(err, plugbuild.ErrBadPath) {
				t.Fatalf("err = %v, want errBadPluginPath", err)
			}
		})
	}
}

func TestBuildPackage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"./plugin", "./plugin", true},
		{"plugin", "./plugin", true},
		{"cmd/tool/", "./cmd/tool", true},
		{"../other", "", false},
		{"/abs", "", false},
	} {
		got, err := install.BuildPackage(tc.in)
		if tc.ok != (err == nil) || got != filepath.FromSlash(tc.want) {
			t.Errorf("buildPackage(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestConfirm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		want   bool
	}{{"y\n", true}, {"YES\n", true}, {"n\n", false}, {"\n", false}, {"", false}, {"yes please\n", false}} {
		ios, in, _, errOut := TestIO()
		in.WriteString(tc.answer)
		got, err := confirm(ios, "Go?")
		if err != nil || got != tc.want {
			t.Errorf("confirm(%q) = %v, %v; want %v", tc.answer, got, err, tc.want)
		}
		if errOut.String() != "Go? [y/N] " {
			t.Errorf("question = %q", errOut.String())
		}
	}
}

// TestAddFlags checks the command line reaches addOptions, GitHub CLI style.
func TestAddFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := testFactory(t, nil)
	var got *addOptions
	cmd := newCmdAdd(f, func(_ context.Context, o *addOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"owner/repo", "weather", "--name", "w2", "--ref", "main", "--trust", "-y"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Source != "owner/repo" || len(got.Skills) != 1 || got.Skills[0] != "weather" || got.Name != "w2" || got.Ref != "main" || !got.Trust || !got.Yes {
		t.Fatalf("options = %+v", got)
	}
}

func TestAddFlagUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"all and names", []string{"o/r", "a", "--all"}},
		{"list and names", []string{"o/r", "a", "--list"}},
		{"json without list", []string{"o/r", "--json"}},
		{"name with several", []string{"o/r", "a", "b", "--name", "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := testFactory(t, nil)
			cmd := newCmdAdd(f, func(context.Context, *addOptions) error { return nil })
			cmd.SetArgs(tc.args)
			var ue *usageError
			if err := cmd.Execute(); !errors.As(err, &ue) {
				t.Fatalf("err = %v; want a usage error", err)
			}
		})
	}
}

func TestAddPromptsOnTerminal(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": "---\nname: tty\ndescription: \"Asked about.\\e[2J\"\n" +
		"permissions:\n  env: [TTY_TOKEN, \"TTY_*\"]\n  fs:\n    read: [~/tty-data]\n    write: [/]\n  network: [api.tty.example:443, \"*\"]\n---\nbody\n"})
	for _, tc := range []struct {
		name, answer string
		wantCode     int
		installed    bool
	}{
		{"yes installs untrusted", "y\n", 0, true},
		{"no cancels", "n\n", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			f, _, errOut := testFactory(t, map[string]string{"AGENT_HOME": home})
			f.IO.In = strings.NewReader(tc.answer)
			f.IO.StdinTTY, f.IO.StderrTTY = true, true
			code := Run(context.Background(), f, []string{"skill", "add", repo.FileURL()})
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, errOut)
			}
			if !strings.Contains(errOut.String(), "Install untrusted skill from "+repo.FileURL()+"? [y/N]") {
				t.Fatalf("no question in stderr:\n%s", errOut)
			}
			// Before the question: what the skill is and asks for, escaped.
			asked, _, _ := strings.Cut(errOut.String(), "Install untrusted skill")
			for _, want := range []string{
				`Skill tty: Asked about.\u001b[2J`,
				"read: its own folder and ~/tty-data; write: a temp folder per call and /; network: api.tty.example:443, *",
				"environment variables: PATH, HOME, LANG, TMPDIR and TTY_TOKEN, TTY_*",
				`warning: permissions.fs.write: "/" lets this skill's code change every file`,
				`warning: permissions.network: "*" lets this skill's code reach any host`,
			} {
				if !strings.Contains(asked, want) {
					t.Errorf("before the question, no %q in:\n%s", want, asked)
				}
			}
			if strings.Contains(errOut.String(), "\x1b") {
				t.Errorf("stderr holds a raw ESC:\n%q", errOut)
			}
			e, err := registry.NewStore(home).Get("tty")
			if tc.installed != (err == nil) {
				t.Fatalf("Get = %+v, %v; want installed=%v", e, err, tc.installed)
			}
			if tc.installed && e.Trusted {
				t.Fatal("installed trusted without --trust")
			}
		})
	}
}

func TestPrepareBuildFailure(t *testing.T) {
	t.Parallel()
	in := &install.Preparer{
		Build: func(ctx context.Context, name, dir, rel, out string, _ bool) error {
			return &plugbuild.BuildError{Err: errors.New("exit status 1"), Output: "./main.go:3:2: undefined: oops\n"}
		},
		Describe: func(context.Context, host.Plugin) ([]sdk.ToolInfo, error) {
			t.Fatal("describe called after a failed build")
			return nil, nil
		},
		Environ: func() []string { return nil },
	}
	dir := t.TempDir()
	err := in.Prepare(context.Background(), &registry.Staged{
		Canonical: "x",
		Manifest:  &manifest.Manifest{Name: "x", Plugin: &manifest.PluginSpec{Build: "./plugin"}},
		SkillDir:  dir,
		PluginOut: filepath.Join(dir, "out", "x"),
	})
	if !errors.Is(err, plugbuild.ErrBuild) || !strings.Contains(err.Error(), "undefined: oops") {
		t.Fatalf("err = %v, want errBuildFailed with the compiler output", err)
	}
	if !strings.Contains(describe(err), "fix the compile errors") {
		t.Fatalf("describe(err) has no advice: %s", describe(err))
	}
}

func TestPrepareCommandPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\n", 0o755)
	var described host.Plugin
	in := &install.Preparer{
		Build: func(context.Context, string, string, string, string, bool) error {
			t.Fatal("go build for a command plugin")
			return nil
		},
		Describe: func(_ context.Context, p host.Plugin) ([]sdk.ToolInfo, error) {
			described = p
			return []sdk.ToolInfo{{Name: "t", Description: "d"}}, nil
		},
		Environ: func() []string { return []string{"PATH=/bin", "SECRET=x", "TOOL_KEY=k"} },
	}
	st := &registry.Staged{
		Canonical: "x",
		Manifest:  &manifest.Manifest{Name: "x", Plugin: &manifest.PluginSpec{Command: "bin/tool"}, Permissions: manifest.Permissions{Env: []string{"TOOL_*", "TOOL_KEY"}}},
		SkillDir:  dir,
	}
	if err := in.Prepare(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.Plugin == nil || st.Plugin.Path != filepath.Join(dir, "bin", "tool") || len(st.Plugin.SHA256) != 64 {
		t.Fatalf("Plugin = %+v", st.Plugin)
	}
	if len(st.Tools) != 1 || st.Tools[0].Name != "t" {
		t.Fatalf("Tools = %+v", st.Tools)
	}
	if got := strings.Join(described.Env, " "); got != "PATH=/bin TOOL_KEY=k" {
		// TOOL_KEY is a secret: TOOL_* alone would not hand it over
		// (envfilter.Names), its whole name does.
		t.Fatalf("plugin env = %q, want only the base and allowed names", got)
	}
}

func TestDescribeGivesAdvice(t *testing.T) {
	t.Parallel()
	for _, sentinel := range []error{
		manifest.ErrInvalidName, manifest.ErrInvalidManifest, registry.ErrNotFound, registry.ErrAlreadyInstalled,
		registry.ErrCorrupt, manifest.ErrIncompatible, gitsrc.ErrUnsupportedSource, gitsrc.ErrRepoNotFound,
		gitsrc.ErrAuthRequired, gitsrc.ErrUnreachable, gitsrc.ErrNoSkill, gitsrc.ErrAmbiguousSkill,
		gitsrc.ErrRefNotFound, gitsrc.ErrNoMatchingVersion, host.ErrTampered, host.ErrUnknownPlugin, host.ErrStart,
	} {
		err := errors.Join(errors.New("operation"), sentinel)
		if got := describe(err); got == err.Error() {
			t.Errorf("no advice for %v", sentinel)
		}
	}
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// TestLazyRegexps compiles every package-level pattern the binary links, so
// a bad one fails here rather than on a user's first use of it.
func TestLazyRegexps(t *testing.T) {
	if err := lazyregexp.CompileAll(); err != nil {
		t.Fatal(err)
	}
}

func TestPrintInstalledCGONote(t *testing.T) {
	t.Parallel()
	const cgoSkill = "---\nname: native\ndescription: d\nplugin:\n  build: ./plugin\ncgo: true\n---\nbody\n"
	withPlugin := &registry.Listing{Manifest: manifest.Manifest{Plugin: &manifest.PluginSpec{Build: "./plugin"}}}
	tests := []struct {
		name    string
		listing *registry.Listing
		want    bool
	}{
		{name: "listed with a plugin to build", listing: withPlugin, want: true},
		{name: "not listed (untrusted)", listing: nil, want: true},
		// The listing says there is no plugin: SKILL.md is not read again,
		// so what it says about cgo does not matter.
		{name: "listed without a plugin", listing: &registry.Listing{}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(cgoSkill), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			printInstalled(&out, registry.Entry{Name: "native", Canonical: "native", Path: dir, Listing: tt.listing})
			if got := strings.Contains(out.String(), "builds with cgo"); got != tt.want {
				t.Errorf("cgo note shown = %v, want %v\n%s", got, tt.want, out.String())
			}
		})
	}
}
