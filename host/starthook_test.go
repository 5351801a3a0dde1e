//go:build unix

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentskills/agent/sdk"
)

// TestStartHook: the hook hears each process start once, the first as a
// start and every later one (after a crash, after the definition was
// registered again as an idle stop does) as a restart; warm calls start
// nothing.
func TestStartHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	h := newHost(t, WithStartHook(func(_ context.Context, name string, restart bool) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%s restart=%v", name, restart))
	}))
	h.Register(tp())
	ctx := context.Background()
	echo := json.RawMessage(`{"text":"ok"}`)
	for range 3 {
		if _, err := h.Invoke(ctx, "tp", "echo", echo); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.Invoke(ctx, "tp", "exit", json.RawMessage(`{"code":7}`))
	sdkErr(t, err, sdk.CodePluginCrashed)
	if _, err := h.Invoke(ctx, "tp", "echo", echo); err != nil {
		t.Fatal(err)
	}
	h.Register(tp()) // what the workspace does to stop an idle plugin
	if _, err := h.Invoke(ctx, "tp", "echo", echo); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"tp restart=false", "tp restart=true", "tp restart=true"}
	if !slices.Equal(got, want) {
		t.Errorf("starts %q, want %q", got, want)
	}
}
