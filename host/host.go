package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentskills/agent/internal/ground/envfilter"
	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/internal/isolation/procgroup"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/sdk"
)

// Errors that wrap launch problems. Tool failures are *sdk.Error instead.
var (
	// ErrTampered: the plugin binary's sha256 differs from the registry's.
	ErrTampered = errors.New("plugin binary does not match its recorded sha256")
	// ErrUnknownPlugin: no plugin is registered under that name.
	ErrUnknownPlugin = errors.New("no plugin registered under that name")
	// ErrStart: the plugin could not be started or did not complete the
	// handshake.
	ErrStart = errors.New("plugin failed to start")
	// ErrClosed: the Host was closed.
	ErrClosed = errors.New("plugin host is closed")
)

// Plugin says how to run one skill's plugin.
type Plugin struct {
	Name string   // skill name, used in messages and logs
	Path string   // the executable
	Args []string // arguments after the executable
	// SHA256 is the hex sha256 the binary must have. "" marks a built-in
	// (the agent binary itself), which is not checked.
	SHA256 string
	Env    []string // the plugin's whole environment (see FilterEnv)
	Dir    string   // working directory; "" = the host's
	// Sandbox is what the skill's SKILL.md grants its code beyond its
	// folder (sandbox.Declared): the plugin then runs confined to it (see
	// Host.confine). nil runs it unconfined: the bundled plugins, which
	// confine each command they run instead.
	Sandbox *sandbox.Policy
}

// Option configures a Host.
type Option func(*config)

type config struct {
	logger       hclog.Logger
	stateDir     string
	callTimeout  time.Duration
	startTimeout time.Duration
	cancelGrace  time.Duration
	onStart      func(ctx context.Context, name string, restart bool)
	// autoMTLS: go-plugin listens on a Unix socket in a 0700 folder,
	// except on Windows, where it listens on TCP 127.0.0.1, which any
	// local process can reach: there the host and plugin authenticate
	// each other with certificates made for this one start. Tests turn
	// it on elsewhere.
	autoMTLS bool
	// scripts: "#!" plugins run through their interpreter, except on
	// Windows, which has no such thing; there they are refused by name
	// rather than left to CreateProcess's "not a valid Win32
	// application". Tests turn it off elsewhere.
	scripts bool
}

// CancelGrace is how long a plugin may take to stop a call whose deadline
// passed before the host kills it (and with it the other calls it serves,
// which end with plugin_crashed).
const CancelGrace = 2 * time.Second

// WithCancelGrace replaces CancelGrace.
func WithCancelGrace(d time.Duration) Option { return func(c *config) { c.cancelGrace = d } }

// WithLogger sets the host's logger. Plugins log at its level, through it.
func WithLogger(l hclog.Logger) Option { return func(c *config) { c.logger = l } }

// WithStateDir keeps binary fingerprints under dir/fingerprints so that a
// later process can skip re-hashing an unchanged binary.
func WithStateDir(dir string) Option { return func(c *config) { c.stateDir = dir } }

// WithCallTimeout bounds every Invoke (0, the default, leaves it to the
// caller's context). A call that runs out of time is an *sdk.Error with
// code timeout and its plugin is killed.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithStartTimeout bounds launch plus handshake (default 10s).
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// WithStartHook has f told of every plugin process that started and
// completed the handshake, with restart true when this host had started
// a plugin of that name before (it crashed, was killed at a deadline, was
// stopped idle or replaced). f runs on the calling goroutine before the
// call that caused the start: keep it quick. It lets a front end count
// starts (agent mcp --http's metrics) without the host knowing of them.
func WithStartHook(f func(ctx context.Context, name string, restart bool)) Option {
	return func(c *config) { c.onStart = f }
}

// Host runs skill plugins: one process per registered plugin, started on
// the first call and shared by all callers. It is safe for concurrent use.
type Host struct {
	cfg      config
	verifier *verifier
	level    string

	mu     sync.RWMutex
	procs  map[string]*proc
	closed atomic.Bool

	// sealed holds one verified, sealed copy per plugin version (path and
	// sha256): every restart launches from it without touching the path.
	sealMu  sync.Mutex
	sealed  map[string]*sealedBinary
	started map[string]bool // versions started at least once
	// launched holds the name of every plugin started once (for
	// WithStartHook's restart).
	launched sync.Map
	// noTrace: starting children stopped at exec failed here (ptrace not
	// allowed), so every launch uses a sealed copy.
	noTrace atomic.Bool

	bg sync.WaitGroup // cleanup of killed plugins
}

// proc is one registered plugin and its current process, if any.
type proc struct {
	p   Plugin
	mu  sync.Mutex // serialises starts
	cur atomic.Pointer[instance]
}

// instance is one running plugin process.
type instance struct {
	client  *plugin.Client
	skill   sdk.Skill
	run     *procRunner
	stderr  *tail
	retired atomic.Bool
	// how the binary was started: "exec_stop" (the installed file,
	// checked while stopped at exec), "sealed_copy" or "path" (no
	// recorded hash: a test's plugin).
	how string
}

func (i *instance) alive() bool { return !i.retired.Load() && !i.run.exited.Load() }

// New returns a Host. No process starts until Invoke.
func New(opts ...Option) *Host {
	// Plugins' cgroups live in this process's session, which a watcher
	// kills if this process dies.
	procgroup.UseSession()
	cfg := config{startTimeout: 10 * time.Second, cancelGrace: CancelGrace, autoMTLS: runtime.GOOS == "windows", scripts: runtime.GOOS != "windows"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = hclog.NewNullLogger()
	}
	level := cfg.logger.GetLevel()
	if level == hclog.NoLevel || level == hclog.Off {
		level = hclog.Error
	}
	return &Host{
		cfg:      cfg,
		verifier: newVerifier(cfg.stateDir),
		level:    level.String(),
		procs:    map[string]*proc{},
		sealed:   map[string]*sealedBinary{},
		started:  map[string]bool{},
	}
}

func sealKey(p Plugin) string { return p.Path + "\x00" + strings.ToLower(p.SHA256) }

// firstStart reports (once per plugin version) that this host never
// started p before: later starts are restarts, which use the sealed copy.
func (h *Host) firstStart(p Plugin) bool {
	h.sealMu.Lock()
	defer h.sealMu.Unlock()
	key := sealKey(p)
	if h.started[key] || h.sealed[key] != nil {
		return false
	}
	h.started[key] = true
	return true
}

// startsWithShebang reports a "#!" file, whose /proc/pid/exe would be its
// interpreter: those always run from a sealed copy.
func startsWithShebang(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := f.ReadAt(b[:], 0)
	return n == 2 && b == [2]byte{'#', '!'}
}

// sealedCopy returns the sealed copy of p's binary, making (and verifying)
// it on first use.
func (h *Host) sealedCopy(p Plugin) (*sealedBinary, error) {
	key := sealKey(p)
	h.sealMu.Lock()
	defer h.sealMu.Unlock()
	if s := h.sealed[key]; s != nil {
		return s, nil
	}
	s, err := h.verifier.seal(p)
	if err != nil {
		return nil, err
	}
	h.sealed[key] = s
	return s, nil
}

// Register adds or replaces a plugin definition. It starts nothing; a
// process of a replaced definition is stopped.
func (h *Host) Register(p Plugin) {
	h.mu.Lock()
	old := h.procs[p.Name]
	h.procs[p.Name] = &proc{p: p}
	h.mu.Unlock()
	if old != nil {
		old.mu.Lock()
		inst := old.cur.Swap(nil)
		old.mu.Unlock()
		if inst != nil {
			h.retire(inst, false)
		}
	}
}

// Invoke calls tool in the named plugin, starting the plugin if it is not
// running. Tool failures, crashes (plugin_crashed), deadlines (timeout) and
// cancellation (canceled) come back as *sdk.Error; launch problems wrap
// ErrStart, ErrTampered or ErrUnknownPlugin.
func (h *Host) Invoke(ctx context.Context, name, tool string, args json.RawMessage) (sdk.Result, error) {
	h.mu.RLock()
	pr := h.procs[name]
	h.mu.RUnlock()
	if pr == nil {
		return sdk.Result{}, fmt.Errorf("invoke %s.%s: %w: %q", name, tool, ErrUnknownPlugin, name)
	}
	if h.closed.Load() {
		return sdk.Result{}, fmt.Errorf("invoke %s.%s: %w", name, tool, ErrClosed)
	}
	inst := pr.cur.Load()
	start := "warm"
	if inst == nil || !inst.alive() {
		var err error
		if inst, err = h.start(ctx, pr); err != nil {
			return sdk.Result{}, err
		}
		start = "cold"
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(semconv.AgentPluginStart.String(start))
	}
	if h.cfg.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.callTimeout)
		defer cancel()
	}
	dl, ok := ctx.Deadline()
	if !ok {
		res, err := inst.skill.Invoke(ctx, tool, args)
		return h.answer(ctx, pr, inst, tool, res, err)
	}
	// The plugin learns the call's deadline with the request and its
	// handler is canceled then. The gRPC call itself is canceled cancelGrace
	// later, so that the host hears whether the handler stopped; only a
	// plugin that ignores the cancellation that long is killed. A cancel
	// by the caller (not a deadline) cancels the gRPC call at once. The
	// call runs on the caller's goroutine and the gRPC call carries no
	// deadline of its own: a goroutine per call and a second deadline
	// (a header, and timers in both processes) were 0.2× of a warm call.
	rpcCtx, cancelRPC := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRPC(nil)
	rpcCtx = sdk.WithCallDeadline(rpcCtx, dl)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancelRPC(nil)
			return
		}
		time.AfterFunc(h.cfg.cancelGrace, func() { cancelRPC(errIgnoredCancel) })
	})
	res, err := inst.skill.Invoke(rpcCtx, tool, args)
	stop()
	if err != nil && errors.Is(context.Cause(rpcCtx), errIgnoredCancel) {
		var te *sdk.Error
		if !errors.As(err, &te) || errors.Is(err, sdk.ErrTransport) {
			h.detach(pr, inst)
			h.retire(inst, true)
			return sdk.Result{}, sdk.Errorf(sdk.CodeTimeout, "%s.%s did not finish before its deadline%s and ignored the cancellation for %s, so its plugin was stopped; it starts again on the next call",
				pr.p.Name, tool, h.limitNote(), h.cfg.cancelGrace)
		}
	}
	return h.answer(ctx, pr, inst, tool, res, err)
}

// limitNote names the host's own call timeout in a timeout message.
func (h *Host) limitNote() string {
	if h.cfg.callTimeout > 0 {
		return fmt.Sprintf(" (call timeout %s)", h.cfg.callTimeout)
	}
	return ""
}

// errIgnoredCancel ends the gRPC call of a handler that did not stop
// within cancelGrace of its deadline.
var errIgnoredCancel = errors.New("the handler ignored its deadline")

// answer turns what the plugin said into the caller's result.
func (h *Host) answer(ctx context.Context, pr *proc, inst *instance, tool string, res sdk.Result, err error) (sdk.Result, error) {
	if err == nil {
		return res, nil
	}
	// A handler that honours its context answers "timeout" itself, and
	// that answer can beat our own timer; past the deadline it is ours.
	if errors.Is(err, sdk.ErrTransport) || deadlinePassed(ctx) {
		return sdk.Result{}, h.transportFailure(ctx, pr, inst, tool, err)
	}
	return res, err
}

func deadlinePassed(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// transportFailure turns a failed call (a broken transport, or any answer
// after the deadline) into the structured error the caller sees, and
// retires the process when it cannot be trusted anymore.
func (h *Host) transportFailure(ctx context.Context, pr *proc, inst *instance, tool string, err error) error {
	name := pr.p.Name
	code := status.Code(err)
	switch {
	case deadlinePassed(ctx) || errors.Is(ctx.Err(), context.DeadlineExceeded) || code == codes.DeadlineExceeded:
		// The handler answered, or the call was cut, at its deadline; a
		// plugin that ignores cancellation is dealt with in Invoke.
		return sdk.Errorf(sdk.CodeTimeout, "%s.%s did not finish before its deadline%s; the call was canceled", name, tool, h.limitNote())
	case errors.Is(ctx.Err(), context.Canceled):
		// Only the caller's own cancel: codes.Canceled with a live ctx is
		// gRPC closing the connection of a plugin that was stopped or
		// died under the call, which is a crash for this caller.
		return sdk.Errorf(sdk.CodeCanceled, "%s.%s was canceled", name, tool)
	case code == codes.ResourceExhausted && strings.Contains(status.Convert(err).Message(), "received message larger"):
		return sdk.Errorf(sdk.CodeToolFailed, "%s.%s returned more than the %d MiB a result may hold (%v); ask the tool for less, for example a smaller page or a file path instead of the contents",
			name, tool, sdk.MaxResultSize>>20, status.Convert(err).Message())
	case code == codes.ResourceExhausted:
		return sdk.Errorf(sdk.CodeInvalidArgs, "%s.%s: message too large: %v", name, tool, status.Convert(err).Message())
	}
	h.detach(pr, inst)
	// Give a dying process a moment so the message can say how it died.
	select {
	case <-inst.run.done:
	case <-time.After(200 * time.Millisecond):
	}
	how := "the connection to it broke: " + status.Convert(err).Message()
	if inst.run.exited.Load() {
		how = "it exited"
		if inst.run.waitErr != nil {
			how = "it exited: " + inst.run.waitErr.Error()
		}
	}
	h.retire(inst, true)
	msg := fmt.Sprintf("the %s plugin stopped during %s (%s); it starts again on the next call", name, tool, how)
	if p := inst.stderr.panicLine(); p != "" {
		msg += "; " + p
	} else if t := lastLines(inst.stderr.String(), 3); t != "" {
		msg += "; last output: " + t
	}
	return &sdk.Error{Code: sdk.CodePluginCrashed, Message: msg}
}

// detach makes the next call start a fresh process.
func (h *Host) detach(pr *proc, inst *instance) { pr.cur.CompareAndSwap(inst, nil) }

// retire stops inst once. With hard it is SIGKILLed at once (it hangs or
// is broken); otherwise go-plugin asks it to shut down first.
func (h *Host) retire(inst *instance, hard bool) {
	if !inst.retired.CompareAndSwap(false, true) {
		return
	}
	if hard {
		_ = inst.run.Kill(context.Background())
	}
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		inst.client.Kill() // reaps the process, removes the socket dir
	}()
}

func (h *Host) start(ctx context.Context, pr *proc) (*instance, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if h.closed.Load() {
		return nil, fmt.Errorf("start %s: %w", pr.p.Name, ErrClosed)
	}
	if inst := pr.cur.Load(); inst != nil {
		if inst.alive() {
			return inst, nil
		}
		pr.cur.Store(nil)
		h.retire(inst, true)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: skill %q: %w", ErrStart, pr.p.Name, err)
	}
	_, span := startLaunchSpan(ctx, pr.p.Name)
	inst, err := h.launch(pr.p)
	how := ""
	if inst != nil {
		how = inst.how
	}
	endLaunchSpan(span, how, err)
	if err != nil {
		return nil, err
	}
	pr.cur.Store(inst)
	if h.cfg.onStart != nil {
		_, restart := h.launched.LoadOrStore(pr.p.Name, true)
		h.cfg.onStart(ctx, pr.p.Name, restart)
	}
	return inst, nil
}

// launch starts p's verified bytes, never a path someone can still
// rewrite. The first start of a binary runs the installed file stopped at
// exec and checks what the kernel holds (see verifier.checkExe), which
// costs no copy; restarts, "#!" plugins and binaries that someone holds
// open for writing run the version's sealed copy.
func (h *Host) launch(p Plugin) (*instance, error) {
	if !h.cfg.scripts && startsWithShebang(p.Path) {
		return nil, fmt.Errorf("%w: skill %q: its plugin %s is a script (it starts with #!), which Windows cannot run; the skill needs a Go plugin (plugin.build) or a Windows program (.exe)", ErrStart, p.Name, p.Path)
	}
	execPath := p.Path
	var extra []*os.File
	var atExec func(int) error
	var commit func()
	var busy func() (string, []*os.File, error)
	attr := &syscall.SysProcAttr{}
	how := "path"
	if p.SHA256 != "" {
		how = "sealed_copy"
		if canTrace && !h.noTrace.Load() && !startsWithShebang(p.Path) && h.firstStart(p) {
			how = "exec_stop"
			setTrace(attr, true)
			atExec = func(pid int) (err error) {
				commit, err = h.verifier.checkExe(p, pid)
				return err
			}
			busy = func() (string, []*os.File, error) {
				s, err := h.sealedCopy(p)
				if err != nil {
					return "", nil, err
				}
				path, extra := s.exec()
				return path, extra, nil
			}
		} else {
			s, err := h.sealedCopy(p)
			if err != nil {
				return nil, err
			}
			execPath, extra = s.exec()
		}
	}
	log := h.cfg.logger.Named(p.Name)
	stderr := &tail{}
	var run *procRunner
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.PluginSets(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		GRPCDialOptions:  dialTracing(p.Name, h.cfg.logger.Warn),
		AutoMTLS:         h.cfg.autoMTLS,
		StartTimeout:     h.cfg.startTimeout,
		// go-plugin names the plugin's own log lines after runner.Name(),
		// the skill: "agent.hello: ...".
		Logger:     h.cfg.logger,
		Stderr:     stderr,
		SyncStdout: lineLog{log, "stdout"},
		SyncStderr: lineLog{log, "stderr"},
		RunnerFunc: func(_ hclog.Logger, base *exec.Cmd, _ string) (runner.Runner, error) {
			// base.Env holds only go-plugin's variables (SkipHostEnv),
			// including the private 0700 socket directory it created.
			env := make([]string, 0, len(p.Env)+len(base.Env)+2)
			env = append(env, p.Env...)
			env = append(env, base.Env...)
			env = append(env, sdk.EnvLogLevel+"="+h.level)
			var pol *sandbox.Policy
			var tmp string
			if p.Sandbox != nil {
				var err error
				if pol, tmp, err = h.confine(p, base.Env); err != nil {
					return nil, err
				}
				env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
				env = append(env, "TMPDIR="+tmp)
			}
			cmd := &exec.Cmd{
				Path:        execPath,
				Args:        append([]string{p.Path}, p.Args...),
				Env:         env,
				Dir:         p.Dir,
				ExtraFiles:  extra,
				SysProcAttr: attr,
			}
			run = newRunner(p.Name, log, cmd)
			run.atExec, run.busy = atExec, busy
			run.sandbox, run.tmp = pol, tmp
			run.started = func() {
				if commit != nil {
					commit()
					commit = nil
				}
			}
			return run, nil
		},
	})
	fail := func(err error) (*instance, error) {
		client.Kill()
		if errors.Is(err, ErrTampered) {
			return nil, err
		}
		if run != nil && run.traceDenied {
			h.noTrace.Store(true) // ptrace is not allowed here: copies from now on
			return h.launch(p)
		}
		msg := fmt.Sprintf("skill %q (%s): %v", p.Name, p.Path, err)
		if t := lastLines(stderr.String(), 5); t != "" {
			msg += "; plugin output: " + t
		}
		return nil, fmt.Errorf("%w: %s; check that the plugin's main calls sdk.Serve", ErrStart, msg)
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		return fail(err)
	}
	skill, ok := raw.(sdk.Skill)
	if !ok {
		return fail(fmt.Errorf("dispensed %T, not a skill", raw))
	}
	return &instance{client: client, skill: skill, run: run, stderr: stderr, how: how}, nil
}

// confine is a skill plugin's sandbox (SPEC §8): it reads its folder, its
// binary, the system and what SKILL.md grants; it writes a temp folder of
// its own (its TMPDIR, returned, removed when it exits), go-plugin's
// socket folder (named in goPluginEnv) and what SKILL.md grants; its
// network is what SKILL.md declares.
func (h *Host) confine(p Plugin, goPluginEnv []string) (*sandbox.Policy, string, error) {
	tmp, err := os.MkdirTemp("", "agent-plugin-")
	if err != nil {
		return nil, "", fmt.Errorf("%w: skill %q: its temp folder: %w", ErrStart, p.Name, err)
	}
	pol := &sandbox.Policy{
		Read:    append(append([]string{p.Path}, sandbox.System...), p.Sandbox.Read...),
		Write:   append([]string{tmp}, p.Sandbox.Write...),
		Move:    p.Sandbox.Move,
		Network: p.Sandbox.Network,
		Fixed:   p.Sandbox.Fixed,
		Serves:  true,
	}
	if p.Dir != "" {
		pol.Read = append(pol.Read, p.Dir)
	}
	for _, kv := range goPluginEnv {
		if dir, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok {
			pol.Write = append(pol.Write, dir)
		}
	}
	// The check at exec runs on the restricted thread: read the record
	// of the last full hash now, while the state folder can be read.
	h.verifier.lookup(p.Path)
	return pol, tmp, nil
}

// Close kills every plugin and waits for them to exit. Later calls fail
// with ErrClosed.
func (h *Host) Close() error {
	h.closed.Store(true)
	h.mu.RLock()
	procs := make([]*proc, 0, len(h.procs))
	for _, pr := range h.procs {
		procs = append(procs, pr)
	}
	h.mu.RUnlock()
	for _, pr := range procs {
		pr.mu.Lock() // wait for a start in progress
		inst := pr.cur.Swap(nil)
		pr.mu.Unlock()
		if inst != nil {
			h.retire(inst, false)
		}
	}
	h.bg.Wait()
	h.sealMu.Lock()
	for k, s := range h.sealed {
		s.close()
		delete(h.sealed, k)
	}
	h.sealMu.Unlock()
	return nil
}

// Describe starts p once, asks it for its tools and stops it: what
// `agent skill add` records, so that listing tools never starts a process.
func Describe(ctx context.Context, p Plugin, opts ...Option) ([]sdk.ToolInfo, error) {
	h := New(opts...)
	defer h.Close()
	h.Register(p)
	h.mu.RLock()
	pr := h.procs[p.Name]
	h.mu.RUnlock()
	inst, err := h.start(ctx, pr)
	if err != nil {
		return nil, err
	}
	tools, err := inst.skill.Describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("describe skill %q: %w", p.Name, err)
	}
	return tools, nil
}

// PID returns the process id of the named plugin, or 0 when it is not
// running. For diagnostics (`agent check`) and tests.
func (h *Host) PID(name string) int {
	h.mu.RLock()
	pr := h.procs[name]
	h.mu.RUnlock()
	if pr == nil {
		return 0
	}
	if inst := pr.cur.Load(); inst != nil && inst.alive() {
		return inst.run.pid
	}
	return 0
}

// baseEnv is what every plugin gets besides its allow-list.
var baseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// FilterEnv builds a plugin environment from environ (usually
// os.Environ()): the base variables PATH, HOME, LANG and TMPDIR, plus the
// names matching allow (permissions.env; `*` matches any run of
// characters, for example HELLO_*), less secrets (SPEC §12) that neither
// allow nor pass (the configuration's pass_env) names in full.
func FilterEnv(environ, allow, pass []string) []string {
	return envfilter.Policy{Base: baseEnv, Allow: allow, Pass: pass}.Filter(environ)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
