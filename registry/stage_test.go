package registry

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

func TestStageWorkers(t *testing.T) {
	t.Parallel()
	plain := &manifest.Manifest{Name: "a"}
	withPlugin := &manifest.Manifest{Name: "p", Plugin: &manifest.PluginSpec{Build: "./plugin"}}
	found := func(dir string, m *manifest.Manifest) gitsrc.Found { return gitsrc.Found{Dir: dir, Manifest: m} }
	cores := runtime.GOMAXPROCS(0)
	tests := []struct {
		name string
		sels []gitsrc.Found
		want int
	}{
		{name: "one skill", sels: []gitsrc.Found{found("skills/a", plain)}, want: 1},
		{name: "side by side", sels: []gitsrc.Found{found("skills/a", plain), found("skills/b", plain), found("skills/ab", plain)}, want: min(cores, 3)},
		{name: "a plugin to build", sels: []gitsrc.Found{found("skills/a", plain), found("skills/p", withPlugin)}, want: 1},
		{name: "one inside another", sels: []gitsrc.Found{found("skills/a", plain), found("skills/a/inner", plain)}, want: 1},
		{name: "the root and another", sels: []gitsrc.Found{found("", plain), found("skills/b", plain)}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := stageWorkers(tt.sels); got != tt.want {
				t.Errorf("stageWorkers = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestAddAllStagesInOrder adds many skills at once, which stages them on
// every core: the entries come back in order, each SKILL.md's warning is
// shown in order, prep never runs twice at once (it is the caller's, and
// need not be safe for concurrent use), and every installed folder hashes
// to what its entry records.
func TestAddAllStagesInOrder(t *testing.T) {
	t.Parallel()
	const n = 40
	files := map[string]string{}
	var want []string
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		files["skills/"+name+"/SKILL.md"] = skillMD(name, fmt.Sprintf("colour: %d", i))
		files["skills/"+name+"/scripts/run.py"] = fmt.Sprintf("print(%d)\n", i)
		want = append(want, name)
	}
	s := newStore(t)
	var running, overlapped atomic.Int32
	prep := func(ctx context.Context, st *Staged) error {
		if running.Add(1) > 1 {
			overlapped.Add(1)
		}
		defer running.Add(-1)
		time.Sleep(time.Millisecond) // room for another to start, were it allowed
		st.Runnable = []string{"run.py"}
		return nil
	}
	var warned []string
	src, _ := gitsrc.ParseSource(gittestRepo(t, files))
	got, err := NewPipeline(s).AddSkills(context.Background(), AddRequest{
		Source: src, All: true, Trusted: true, AgentVersion: "0.5.0",
		Warn: func(msg string) { warned = append(warned, msg) },
	}, prep)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Canonical)
		sum, _, err := HashSkill(e.Path)
		if err != nil || sum != e.DirHash {
			t.Errorf("%s: installed folder hashes to %s (%v), entry records %s", e.Canonical, sum, err, e.DirHash)
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("AddSkills returned %v, want %v", names, want)
	}
	if len(warned) != n {
		t.Fatalf("%d warnings, want one per skill:\n%s", len(warned), strings.Join(warned, "\n"))
	}
	for i, w := range warned {
		if !strings.Contains(w, want[i]+"/SKILL.md") {
			t.Errorf("warning %d is %q, want the one of %s", i, w, want[i])
		}
	}
	if k := overlapped.Load(); k > 0 {
		t.Errorf("prep ran %d times while another prep was running", k)
	}
}
