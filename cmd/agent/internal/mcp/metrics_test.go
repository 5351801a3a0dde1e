//go:build unix

package mcp_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentskills/agent/internal/telemetry"
)

// TestMetrics: `agent mcp --http` serves /metrics behind its token (and
// refuses a browser page's Origin, as /mcp does); after
// real calls to the probe plugin (four that succeed, one that fails, one
// that crashes it) the counters, the latency histogram and the plugin
// starts say so, and Prometheus' own promtool accepts the exposition.
func TestMetrics(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	url, _ := httpServer(t, home, "--token", "m3trics")
	metricsURL := strings.TrimSuffix(url, "/mcp") + "/metrics"

	t.Run("token", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			rt        bearer
			origin    string
			want      int
			challenge string
		}{
			{"no token", bearer{}, "", http.StatusUnauthorized, "Bearer"},
			{"wrong token", bearer{token: "guess"}, "", http.StatusUnauthorized, `error="invalid_token"`},
			{"foreign origin", bearer{token: "m3trics"}, "http://evil.example", http.StatusForbidden, ""},
			{"right token", bearer{token: "m3trics"}, "", http.StatusOK, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, _ := http.NewRequest("GET", metricsURL, nil)
				if tc.origin != "" {
					req.Header.Set("Origin", tc.origin)
				}
				resp, err := (&http.Client{Transport: tc.rt}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
				}
				if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, tc.challenge) || (tc.challenge == "") != (got == "") {
					t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
				}
				if tc.want != http.StatusOK && strings.Contains(string(body), "agent_") {
					t.Errorf("metrics served without the token: %s", body)
				}
			})
		}
	})

	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "m3trics"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, wantError bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError != wantError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	echo := map[string]any{"text": "counted"}
	for range 3 {
		call("echo", echo, false)
	}
	call("fail", nil, true)
	call("crash", nil, true)
	call("echo", echo, false) // starts the plugin again

	body := get(t, metricsURL, "m3trics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	probe := map[string]string{"skill": "probe"}
	for _, tc := range []struct {
		name   string
		family string
		labels map[string]string
		want   float64
	}{
		{"echo calls", "agent_tool_calls_total", map[string]string{"skill": "probe", "tool": "echo", "code": "ok"}, 4},
		{"failed calls", "agent_tool_calls_total", map[string]string{"skill": "probe", "tool": "fail", "code": "probe_failed"}, 1},
		{"crashed calls", "agent_tool_calls_total", map[string]string{"skill": "probe", "tool": "crash", "code": "plugin_crashed"}, 1},
		{"errors by code", "agent_tool_errors_total", map[string]string{"code": "probe_failed"}, 1},
		{"crashes by code", "agent_tool_errors_total", map[string]string{"code": "plugin_crashed"}, 1},
		{"no error for ok", "agent_tool_errors_total", map[string]string{"code": "ok"}, 0},
		{"echo latencies", "agent_tool_call_duration_seconds", map[string]string{"skill": "probe", "tool": "echo"}, 4},
		{"all latencies", "agent_tool_call_duration_seconds", probe, 6},
		{"plugin starts", "agent_plugin_starts_total", probe, 2},
		{"plugin restarts", "agent_plugin_restarts_total", probe, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sum(families[tc.family], tc.labels); got != tc.want {
				t.Errorf("%s%v = %v, want %v\n%s", tc.family, tc.labels, got, tc.want, grepLines(body, tc.family))
			}
		})
	}
	t.Run("buckets", func(t *testing.T) {
		// Every echo call took more than 0 and less than the last
		// bound, and buckets are cumulative up to the count.
		var h *dto.Histogram
		for _, m := range families["agent_tool_call_duration_seconds"].GetMetric() {
			if matches(m, map[string]string{"tool": "echo"}) {
				h = m.GetHistogram()
			}
		}
		if h == nil {
			t.Fatalf("no echo histogram:\n%s", grepLines(body, "duration"))
		}
		b := h.GetBucket()
		want := append(slices.Clone(telemetry.DurationBuckets), math.Inf(1))
		var got []float64
		for _, x := range b {
			got = append(got, x.GetUpperBound())
		}
		if !slices.Equal(got, want) || want[0] != 0.001 || want[len(want)-2] != 300 {
			t.Fatalf("bucket bounds %v, want %v (1 ms to 5 min)", got, want)
		}
		for i := 1; i < len(b); i++ {
			if b[i].GetCumulativeCount() < b[i-1].GetCumulativeCount() {
				t.Errorf("buckets not cumulative: %v", b)
			}
		}
		if last := b[len(b)-1].GetCumulativeCount(); last != 4 || h.GetSampleSum() <= 0 {
			t.Errorf("+Inf bucket %d, sum %v; want 4 and > 0", last, h.GetSampleSum())
		}
	})

	t.Run("promtool", func(t *testing.T) {
		promtool := os.Getenv("PROMTOOL")
		if promtool == "" {
			var err error
			if promtool, err = exec.LookPath("promtool"); err != nil {
				t.Skip("promtool is neither on PATH nor in $PROMTOOL: .ci/run unpacks it from Debian's prometheus package (apt-get download prometheus && dpkg -x prometheus_*.deb DIR; PROMTOOL=DIR/usr/bin/promtool)")
			}
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check metrics: %v\n%s", err, out)
		}
		if len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("promtool check metrics complained:\n%s", out)
		}
	})
}

// get fetches url with the bearer token and fails unless it is 200.
func get(t *testing.T, url, token string) string {
	t.Helper()
	resp, err := (&http.Client{Transport: bearer{token: token}}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

// sum adds the counter values, or the histogram sample counts, of the
// family's metrics whose labels include labels.
func sum(f *dto.MetricFamily, labels map[string]string) float64 {
	var n float64
	for _, m := range f.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			n += m.GetCounter().GetValue()
		case dto.MetricType_HISTOGRAM:
			n += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n
}

func matches(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
