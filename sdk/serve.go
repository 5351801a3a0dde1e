package sdk

import (
	"google.golang.org/grpc"
	"os"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/agentskills/agent/sdk/internal/proctree"
)

// ServeOpt configures Serve.
type ServeOpt func(*serveConfig)

type serveConfig struct {
	logger     hclog.Logger
	parentPoll time.Duration
	idleTrim   time.Duration
}

// WithLogger replaces the default logger: JSON lines on the original
// stderr, at the level the host passed in AGENT_PLUGIN_LOG_LEVEL. The host
// only understands hclog JSON lines, so a replacement should keep
// JSONFormat and write to os.Stderr.
func WithLogger(l hclog.Logger) ServeOpt {
	return func(c *serveConfig) { c.logger = l }
}

// WithParentPoll sets how often Serve checks that the host is still alive
// (default 500ms). The host also asks the kernel to kill its plugins when
// it dies; the poll covers hosts that cannot (not Linux, or a reparented
// plugin).
func WithParentPoll(d time.Duration) ServeOpt {
	return func(c *serveConfig) { c.parentPoll = d }
}

// WithIdleTrim sets how long the plugin must be idle before it returns
// memory to the kernel (default 2s; 0 turns it off). See trimMemory.
func WithIdleTrim(d time.Duration) ServeOpt {
	return func(c *serveConfig) { c.idleTrim = d }
}

var logger atomic.Pointer[hclog.Logger]

// calls counts served calls, so that the idle trimmer knows when nothing
// happened for a while.
var calls atomic.Uint64

// trimWhenIdle trims memory once after every quiet period, including the
// one right after start-up.
func trimWhenIdle(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last, trimmed := calls.Load(), false
	for range t.C {
		n := calls.Load()
		switch {
		case n != last:
			last, trimmed = n, false
		case !trimmed:
			trimMemory()
			trimmed = true
		}
	}
}

// Logger returns the plugin's logger: the one Serve set up, or a logger
// that discards everything before Serve runs. Lines reach the host's log.
func Logger() hclog.Logger {
	if l := logger.Load(); l != nil {
		return *l
	}
	return hclog.NewNullLogger()
}

// Serve is the whole main of a plugin: it answers the host's handshake and
// serves s over gRPC until the host disconnects or dies. Started by hand
// (without the host's cookie in the environment) it prints that it is a
// plugin and exits 1.
func Serve(s Skill, opts ...ServeOpt) {
	cfg := serveConfig{parentPoll: 500 * time.Millisecond, idleTrim: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		level := hclog.LevelFromString(os.Getenv(EnvLogLevel))
		if level == hclog.NoLevel {
			level = hclog.Info
		}
		cfg.logger = hclog.New(&hclog.LoggerOptions{
			Output:     os.Stderr,
			Level:      level,
			JSONFormat: true,
		})
	}
	logger.Store(&cfg.logger)

	if os.Getenv(Handshake.MagicCookieKey) == Handshake.MagicCookieValue && cfg.parentPoll > 0 {
		go watchParent(os.Getppid(), cfg.parentPoll, cfg.logger)
	}
	if cfg.idleTrim > 0 {
		go trimWhenIdle(cfg.idleTrim)
	}
	useHandshakeStdout()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: PluginSets(s),
		// A small pool of stream workers saves a goroutine start per call,
		// which is a visible share of a ~100 µs round trip.
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.NumStreamWorkers(2), grpc.SharedWriteBuffer(true), serverTracing())...)
		},
		Logger: cfg.logger,
	})
	// The host closed us: nothing this plugin started may outlive it.
	proctree.KillDescendants()
}

// watchParent exits the plugin once its parent (the host) is gone: the
// kernel then reparents us and Getppid changes.
func watchParent(ppid int, every time.Duration, l hclog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for range t.C {
		if os.Getppid() != ppid {
			l.Warn("host process went away; plugin exiting", "host_pid", ppid)
			proctree.KillDescendants()
			proctree.KillGroup()
			os.Exit(3)
		}
	}
}
