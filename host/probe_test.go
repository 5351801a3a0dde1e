package host

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestProbeCold(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	state := t.TempDir()
	for range 100 {
		h := New(WithLogger(hclog.NewNullLogger()), WithStateDir(state))
		h.Register(tp())
		t0 := time.Now()
		if _, err := h.Invoke(context.Background(), "tp", "echo", benchArgs); err != nil {
			t.Fatal(err)
		}
		Phases[3] = append(Phases[3], time.Since(t0))
		h.Close()
	}
	for i, name := range []string{"verify", "start+handshake", "client", "total"} {
		d := slices.Clone(Phases[i])
		slices.Sort(d)
		t.Logf("%-16s median %v p90 %v", name, d[len(d)/2], d[len(d)*9/10])
	}
}
