package sdk

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
)

// countingHandler records what reaches the handler tracedOnly wraps.
type countingHandler struct{ tags, rpcs int }

func (c *countingHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	c.tags++
	return ctx
}
func (c *countingHandler) HandleRPC(context.Context, stats.RPCStats) { c.rpcs++ }
func (c *countingHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (c *countingHandler) HandleConn(context.Context, stats.ConnStats) {}

// TestTracedOnly: otelgrpc's server handler sees a call only when the host
// sent a trace context with it; a host that does not trace costs the
// plugin nothing per call.
func TestTracedOnly(t *testing.T) {
	info := &stats.RPCTagInfo{FullMethodName: "/skill.v1.Skill/Invoke"}
	for _, tc := range []struct {
		name string
		md   metadata.MD
		want int
	}{
		{"no metadata", nil, 0},
		{"metadata without a trace", metadata.Pairs("content-type", "application/grpc"), 0},
		{"traceparent", metadata.Pairs("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &countingHandler{}
			h := tracedOnly{inner}
			ctx := context.Background()
			if tc.md != nil {
				ctx = metadata.NewIncomingContext(ctx, tc.md)
			}
			ctx = h.TagRPC(ctx, info)
			h.HandleRPC(ctx, &stats.Begin{})
			h.HandleRPC(ctx, &stats.End{})
			if inner.tags != tc.want || inner.rpcs != 2*tc.want {
				t.Errorf("inner saw %d tags and %d RPC events, want %d and %d", inner.tags, inner.rpcs, tc.want, 2*tc.want)
			}
		})
	}
}
