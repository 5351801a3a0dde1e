package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptRepo is the named script repository.
func scriptRepo(ts *testscript.TestScript, name string) *scriptRepos {
	repos := ts.Value(reposKey{}).(*scriptRepos)
	if _, ok := repos.byName[name]; !ok {
		ts.Fatalf("no repository %q", name)
	}
	return repos
}

// cmdMoveTag commits a change to README.md and moves an existing tag onto
// the new commit, as a force-pushed tag on a server would: movetag <repo> <tag>.
func cmdMoveTag(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: movetag <repo> <tag>")
	}
	repos := scriptRepo(ts, args[0])
	r := repos.byName[args[0]]
	r.Commit(repos.tb, map[string]string{"README.md": "moved " + args[1] + "\n"}, "move "+args[1])
	ts.Check(r.Git().DeleteTag(args[1]))
	r.Tag(repos.tb, args[1])
}

// cmdRewrite replaces a repository's whole history, as a force-push of
// rewritten history would: one new root commit with README.md changed,
// every branch and tag moved onto it, the old commits pruned, so the
// server no longer has them: rewrite <repo>.
func cmdRewrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: rewrite <repo>")
	}
	dir := scriptRepo(ts, args[0]).byName[args[0]].Dir()
	gitIn := func(a ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=rewriter", "-c", "user.email=r@example.com"}, a...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("git %s: %v\n%s", strings.Join(a, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tags := strings.Fields(gitIn("tag", "--list"))
	gitIn("checkout", "-q", "--orphan", "rewritten")
	ts.Check(os.WriteFile(dir+"/README.md", []byte("rewritten history\n"), 0o644))
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "rewritten")
	gitIn("branch", "-D", "main")
	gitIn("branch", "-m", "main")
	for _, t := range tags {
		gitIn("tag", "-f", t)
	}
	gitIn("reflog", "expire", "--expire=now", "--all")
	gitIn("gc", "-q", "--prune=now")
}

// cmdLockCommit sets a skill's commit in a lock file to what a tag of a
// script repository points at now, keeping the locked hash, as a
// hand-edited lock would: lockcommit <file> <skill> <repo> <tag>.
func cmdLockCommit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: lockcommit <file> <skill> <repo> <tag>")
	}
	dir := scriptRepo(ts, args[2]).byName[args[2]].Dir()
	out, err := exec.Command("git", "-C", dir, "rev-parse", args[3]+"^{commit}").Output()
	ts.Check(err)
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	var l map[string]any
	ts.Check(json.Unmarshal(data, &l))
	found := false
	for _, s := range l["skills"].([]any) {
		if m := s.(map[string]any); m["name"] == args[1] {
			m["commit"] = strings.TrimSpace(string(out))
			found = true
		}
	}
	if !found {
		ts.Fatalf("no skill %q in %s", args[1], args[0])
	}
	data, err = json.MarshalIndent(l, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(file, data, 0o644))
}
