package run_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentskills/agent/cmd/agent/internal/run"
)

// timedModel measures the time spent in the model client, so that the
// loop's own overhead per step is what is left.
type timedModel struct {
	run.Model
	spent *atomic.Int64
}

func (m timedModel) Turn(ctx context.Context, req run.Request, onText func(string)) (run.Reply, error) {
	start := time.Now()
	defer func() { m.spent.Add(int64(time.Since(start))) }()
	return m.Model.Turn(ctx, req, onText)
}

// BenchmarkRunStep is the runtime overhead row of SPEC §11/§16: a job of
// 10 tool-calling steps against the scripted model on loopback. Reported:
// the loop's time per step with the model calls taken out (overhead-ms/
// step, target ≤ 5 ms), the model client's time per step, and their
// ratio, all from the same run.
func BenchmarkRunStep(b *testing.B) {
	const steps = 10
	h := newHarness(b, "anthropic", true)
	var spent atomic.Int64
	newModel := h.opts.NewModel
	h.opts.NewModel = func(spec string) (run.Model, error) {
		m, err := newModel(spec)
		return timedModel{m, &spent}, err
	}
	h.opts.OnEvent = nil
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range steps - 1 {
			h.srv.Push(tools(call("use_skill", `{"skill":"greeter","args":["Ada"]}`)))
		}
		h.srv.Push(tools(call("attempt_completion", `{}`)), text("done"))
		start := time.Now()
		out, err := run.Start(context.Background(), h.opts, "greet")
		total += time.Since(start)
		if err != nil || out.Steps != steps {
			b.Fatalf("outcome %+v, err %v", out, err)
		}
	}
	n := float64(b.N * steps)
	model := time.Duration(spent.Load())
	b.ReportMetric(float64(total-model)/n/1e6, "overhead-ms/step")
	b.ReportMetric(float64(model)/n/1e6, "model-ms/step")
	b.ReportMetric(float64(total)/float64(model), "run/model")
}
