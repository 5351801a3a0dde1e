package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/ocitest"
)

// npxSkillsDir holds the pinned skills CLI (npx skills) and the Node it
// needs, installed by .ci/run with npm ci.
const npxSkillsDir = "testdata/npxskills"

// TestCatalogScripts runs testdata/catalog/*.txtar (SPEC §20): search and
// the team catalog against real git repositories, a real docker-registry
// and a catalog server the script starts.
func TestCatalogScripts(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/docker-registry"); err != nil {
		ocitest.Start(t) // skips with the reason
	}
	npx, _ := filepath.Abs(filepath.Join(npxSkillsDir, "node_modules", ".bin"))
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(moduleRoot, "testdata", "catalog"),
		Setup: func(env *testscript.Env) error {
			tb := env.T().(testing.TB)
			reg := ocitest.Start(tb)
			env.Setenv("REGISTRY", reg.Host)
			env.Setenv("AGENT_HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("AGENT_PLUGIN_CACHE", os.Getenv("AGENT_PLUGIN_CACHE")) // TestMain's
			env.Setenv("DOCKER_CONFIG", filepath.Join(env.WorkDir, ".docker"))
			// npx skills reports to its authors' server unless told not to.
			env.Setenv("DISABLE_TELEMETRY", "1")
			env.Setenv("DO_NOT_TRACK", "1")
			env.Setenv("NPX_SKILLS_BIN", npx)
			// Every folder under repos/ is a git repository.
			return commitRepos(tb, filepath.Join(env.WorkDir, "repos"))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile": cmdWaitFile,
			"envfrom":  cmdEnvFrom,
			"expand":   cmdExpand,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "npxskills":
				_, err := os.Stat(filepath.Join(npx, "skills"))
				return err == nil, nil
			}
			return false, nil
		},
	})
}

// commitRepos makes each folder under dir a git repository of its files,
// committed on main.
func commitRepos(tb testing.TB, dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		src := filepath.Join(dir, e.Name())
		files := map[string]string{}
		if err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			files[filepath.ToSlash(rel)] = string(b)
			return nil
		}); err != nil {
			return err
		}
		gittest.NewRepoIn(tb, src, files)
	}
	return nil
}

// cmdWaitFile waits (30 s at most) for a file a background command writes.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile <file>")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear in 30 s", args[0])
}

// cmdExpand writes a file with the script's $VARS expanded: expand <in> <out>.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand <in> <out>")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	out := os.Expand(string(b), ts.Getenv)
	ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(args[1])), 0o755))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.TrimLeft(out, "\n")), 0o644))
}
