package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry"
)

// runAt runs one command line against home, on a pretend terminal that
// answers with answer.
func runAt(t *testing.T, home, answer string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errOut := testFactory(t, map[string]string{"AGENT_HOME": home})
	f.IO.In = strings.NewReader(answer)
	f.IO.StdinTTY, f.IO.StderrTTY = answer != "", answer != ""
	code = Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestUpdateAndRemoveAskOnTerminal(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": "---\nname: tty\ndescription: Asked about.\nversion: 1.0.0\n---\nbody\n"})
	home := t.TempDir()
	if code, _, errOut := runAt(t, home, "", "skill", "add", repo.FileURL(), "--trust"); code != 0 {
		t.Fatalf("add: exit %d\n%s", code, errOut)
	}
	old, err := registry.NewStore(home).Get("tty")
	if err != nil {
		t.Fatal(err)
	}
	repo.Commit(t, map[string]string{"SKILL.md": "---\nname: tty\ndescription: Asked about.\nversion: 1.1.0\n---\nbody\n"}, "1.1.0")

	code, out, errOut := runAt(t, home, "n\n", "skill", "update", "tty")
	if code != 0 || !strings.Contains(errOut, "Update tty? [y/N]") || !strings.Contains(out, "tty: not updated") {
		t.Fatalf("update answered no: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if e, _ := registry.NewStore(home).Get("tty"); e.CommitSHA != old.CommitSHA {
		t.Fatal("update answered no moved the skill")
	}

	code, out, errOut = runAt(t, home, "y\n", "skill", "update", "tty")
	if code != 0 || !strings.Contains(out, "tty: updated "+shortSHA(old.CommitSHA)+" → ") || !strings.Contains(out, "(1.0.0 → 1.1.0)") {
		t.Fatalf("update answered yes: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	code, _, errOut = runAt(t, home, "n\n", "skill", "remove", "tty")
	if code != 1 || !strings.Contains(errOut, "Remove tty (") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("remove answered no: exit %d\n%s", code, errOut)
	}
	if _, err := registry.NewStore(home).Get("tty"); err != nil {
		t.Fatalf("remove answered no removed the skill: %v", err)
	}
	if code, _, errOut = runAt(t, home, "y\n", "skill", "remove", "tty"); code != 0 {
		t.Fatalf("remove answered yes: exit %d\n%s", code, errOut)
	}
	if _, err := registry.NewStore(home).Get("tty"); err == nil {
		t.Fatal("skill still installed after remove")
	}
}
