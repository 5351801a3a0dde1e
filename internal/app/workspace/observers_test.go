package workspace

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

// named logs its starts and ends, and what the other observers put in
// the context.
type named struct {
	name string
	log  *[]string
}

type nameKey string

func (n named) CallStart(ctx context.Context, ev CallEvent) context.Context {
	*n.log = append(*n.log, "start "+n.name)
	return context.WithValue(ctx, nameKey(n.name), true)
}

func (n named) CallEnd(ctx context.Context, ev CallEvent, out Outcome) {
	seen := ""
	for _, k := range []string{"a", "b"} {
		if ctx.Value(nameKey(k)) != nil {
			seen += k
		}
	}
	*n.log = append(*n.log, "end "+n.name+" sees "+seen+" "+out.Code)
}

// TestObservers: several observers each hear every call, started in
// order and ended in reverse, each seeing the whole context; nil ones
// are dropped.
func TestObservers(t *testing.T) {
	t.Parallel()
	if Observers() != nil || Observers(nil, nil) != nil {
		t.Error("no observers is not nil")
	}
	var log []string
	a := named{"a", &log}
	if got := Observers(nil, a); got != a {
		t.Errorf("one observer wrapped: %T", got)
	}
	e := registry.Entry{Name: "sub", Canonical: "sub", Path: t.TempDir(), Origin: registry.Origin{Source: registry.SourceBundled}}
	m := &manifest.Manifest{Name: "sub", Description: "A skill.", Body: "Do it."}
	ws, err := New(Config{Observer: Observers(a, nil, Observers(named{"b", &log}))}, []registry.Entry{e}, []*ActiveSkill{{Entry: &e, Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	ws.Call(context.Background(), "nope", json.RawMessage(`{}`), CallOptions{})
	want := []string{"start a", "start b", "end b sees ab unknown_tool", "end a sees ab unknown_tool"}
	if !slices.Equal(log, want) {
		t.Errorf("events %q, want %q", log, want)
	}
}
