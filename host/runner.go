package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/agentskills/agent/internal/isolation/procgroup"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/sdk"
)

// procRunner is our go-plugin runner: it starts the verified copy with
// the exact environment in a group of its own (procgroup.Group: a process
// group, and the kernel kills the child when the host dies; a Job Object
// on Windows), and filters stdout so that stray prints cannot break the
// handshake.
//
// go-plugin reads the plugin's stdout and stderr to EOF before it waits
// for the process, so a descendant that inherited them (a wrapper's
// `sleep 30 &`) would keep the host waiting. The runner therefore watches
// the process itself: when it exits, its whole process group is killed,
// and the pipes are closed after a short drain.
type procRunner struct {
	name   string
	logger hclog.Logger
	cmd    *exec.Cmd
	// atExec, with cmd.SysProcAttr.Ptrace, verifies the child while it is
	// stopped at exec; see spawn.
	atExec func(pid int) error
	// busy, when set, is called once if the exec fails with ETXTBSY (a
	// writer has the file open): it returns how to start from a sealed
	// copy instead.
	busy        func() (path string, extra []*os.File, err error)
	traceDenied bool
	// started runs once the child runs, off the thread that started it
	// (which the sandbox restricts): it records what atExec checked.
	started func()
	// sandbox confines the plugin (internal/sandbox); nil runs it as is.
	// release ends the thread that started it, once it has exited; tmp
	// is its TMPDIR, removed then.
	sandbox *sandbox.Policy
	release func()
	tmp     string

	rawStdout *os.File
	stderr    *eofReader
	stdout    *io.PipeReader
	stdoutW   *io.PipeWriter
	stdoutEOF chan struct{}

	pid    int
	group  *procgroup.Group
	exited atomic.Bool
	done   chan struct{}
	// waitErr is set before done closes, which happens once the pipes
	// are drained.
	waitErr error
}

var _ runner.Runner = (*procRunner)(nil)

// Grace periods of a stopping plugin.
const (
	// termGrace is how long a plugin told to stop (SIGTERM) has to end
	// its descendants and exit before its whole group is SIGKILLed.
	termGrace = 500 * time.Millisecond
	// pipeDrain is how long the host keeps reading what an exited plugin
	// wrote before it closes the pipes that escaped descendants may hold.
	pipeDrain = 250 * time.Millisecond
)

func newRunner(name string, logger hclog.Logger, cmd *exec.Cmd) *procRunner {
	pr, pw := io.Pipe()
	return &procRunner{
		name: name, logger: logger, cmd: cmd,
		stdout: pr, stdoutW: pw, stdoutEOF: make(chan struct{}),
		done: make(chan struct{}),
	}
}

func (r *procRunner) Start(context.Context) error {
	// A file just written (a freshly built plugin) can fail with ETXTBSY
	// while another goroutine's fork still holds the writer's descriptor
	// (golang/go#22315); that clears within milliseconds. An exec.Cmd
	// cannot be started twice, so each attempt gets a copy.
	template := r.cmd
	var err error
	for attempt := range 6 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 2 * time.Millisecond)
		}
		attr := *template.SysProcAttr
		cmd := &exec.Cmd{Path: template.Path, Args: template.Args, Env: template.Env, Dir: template.Dir, ExtraFiles: template.ExtraFiles, SysProcAttr: &attr}
		var group *procgroup.Group
		if group, err = procgroup.New(cmd); err != nil {
			return err
		}
		var outR, outW, errR, errW *os.File
		if outR, outW, err = os.Pipe(); err != nil {
			group.Release()
			return err
		}
		if errR, errW, err = os.Pipe(); err != nil {
			group.Release()
			outR.Close()
			outW.Close()
			return err
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		var release func()
		release, err = spawn(cmd, r.atExec, group, r.sandbox)
		outW.Close()
		errW.Close()
		if err == nil {
			if r.started != nil {
				r.started()
			}
			r.release = release
			r.cmd = cmd
			r.pid = cmd.Process.Pid
			r.group = group
			r.rawStdout, r.stderr = outR, &eofReader{f: errR, eof: make(chan struct{})}
			go r.filterStdout()
			go r.watch()
			return nil
		}
		group.Release()
		outR.Close()
		errR.Close()
		if r.busy != nil && errors.Is(err, syscall.EPERM) {
			r.traceDenied = true // PTRACE_TRACEME refused
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		if r.busy != nil {
			// Someone has the plugin open for writing, so it cannot be
			// run in place: run a sealed copy.
			path, extra, berr := r.busy()
			if berr != nil {
				err = berr
				break
			}
			r.busy, r.atExec = nil, nil
			attr := *template.SysProcAttr
			setTrace(&attr, false)
			template = &exec.Cmd{Path: path, Args: template.Args, Env: template.Env, Dir: template.Dir, ExtraFiles: extra, SysProcAttr: &attr}
		}
	}
	_ = r.stdoutW.Close()
	if r.tmp != "" {
		_ = os.RemoveAll(r.tmp)
	}
	return err
}

// watch reaps the plugin: when it exits, everything left in its group is
// killed (see procgroup.Group.Wait), then the pipes get pipeDrain to
// deliver the last output before they are closed.
func (r *procRunner) watch() {
	err := r.group.Wait()
	r.group.Release()
	if r.release != nil {
		r.release()
	}
	if r.tmp != "" {
		_ = os.RemoveAll(r.tmp)
	}
	// Orphans that left the group (setsid) and were adopted by us when
	// the plugin died without ending them.
	sweepAdopted()
	leaders.mu.Lock()
	delete(leaders.m, r.pid)
	leaders.mu.Unlock()
	r.waitErr = err
	r.exited.Store(true)
	drain := time.NewTimer(pipeDrain)
	defer drain.Stop()
	for _, eof := range []chan struct{}{r.stdoutEOF, r.stderr.eof} {
		select {
		case <-eof:
		case <-drain.C:
		}
	}
	_ = r.rawStdout.Close()
	_ = r.stderr.f.Close()
	close(r.done)
}

// eofReader tells when its reader saw the end of the stream.
type eofReader struct {
	f    *os.File
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.f.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

func (e *eofReader) Close() error { return e.f.Close() }

// handshakeLine finds go-plugin's handshake ("1|1|unix|/path|grpc|") in a
// stdout line, also when a partial print without a newline precedes it.
var handshakeLine = lazyregexp.New(`1\|\d+\|(unix|tcp)\|[^|]+\|(grpc|netrpc)(\|.*)?$`)

// findHandshake returns the handshake part of line, if any.
func findHandshake(line string) (string, bool) {
	loc := handshakeLine.FindStringIndex(line)
	if loc == nil {
		return "", false
	}
	return line[loc[0]:], true
}

func (r *procRunner) filterStdout() {
	defer close(r.stdoutEOF)
	defer r.stdoutW.Close()
	sc := bufio.NewScanner(r.rawStdout)
	sc.Buffer(make([]byte, 4096), 1<<20)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if !seen {
			if hs, ok := findHandshake(line); ok {
				seen = true
				if prefix := line[:len(line)-len(hs)]; prefix != "" {
					r.logger.Debug("plugin wrote to stdout", "line", prefix)
				}
				if _, err := io.WriteString(r.stdoutW, hs+"\n"); err != nil {
					return
				}
				continue
			}
		}
		if line != "" {
			r.logger.Debug("plugin wrote to stdout", "line", line)
		}
	}
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.name }
func (r *procRunner) ID() string            { return strconv.Itoa(r.pid) }

func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin did not answer the go-plugin handshake: check that its main calls sdk.Serve"
}

func (r *procRunner) Wait(context.Context) error {
	<-r.done
	return r.waitErr
}

// Kill asks the plugin to stop (SIGTERM: sdk.Serve then ends its
// descendants, which a SIGKILL would orphan) and SIGKILLs its whole
// process group if it is still there after termGrace.
func (r *procRunner) Kill(context.Context) error {
	if r.group == nil {
		return nil
	}
	r.group.Stop()
	select {
	case <-r.done:
		return nil
	case <-time.After(termGrace):
	}
	r.group.Kill()
	return nil
}

func (r *procRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *procRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

// spawn starts commands from one goroutine locked to its OS thread. Linux
// delivers Pdeathsig when the *thread* that forked the child exits, and the
// Go runtime may retire threads; this thread never exits. It is also the
// tracer of children started stopped at exec (Ptrace), and only the
// tracer's thread may let them go: atExec runs there, while the child is
// stopped, and a non-nil error kills the child instead. group joins the
// child to its group (procgroup.Group.Started) before anyone else hears of
// it.
//
// A sandboxed child (pol not nil) is started instead from a thread of its
// own that the sandbox restricts and that stays parked, the tracer and
// the parent whose death the kernel signals, until release.
func spawn(cmd *exec.Cmd, atExec func(pid int) error, group *procgroup.Group, pol *sandbox.Policy) (release func(), err error) {
	spawnOnce.Do(func() {
		becomeSubreaper()
		spawnCh = make(chan *spawnReq)
		go func() {
			runtime.LockOSThread()
			for req := range spawnCh {
				leaders.mu.Lock()
				var err error
				if req.pol == nil {
					err = startCmd(req.cmd, req.atExec)
				} else {
					req.release, err = sandbox.Start(req.cmd, *req.pol, func(c *exec.Cmd) error { return startCmd(c, req.atExec) })
				}
				if err == nil {
					if err = req.group.Started(); err != nil {
						_ = req.cmd.Wait()
					}
				}
				if err == nil {
					leaders.m[req.cmd.Process.Pid] = true
				}
				leaders.mu.Unlock()
				if err != nil && req.release != nil {
					req.release()
					req.release = nil
				}
				req.done <- err
			}
		}()
	})
	req := &spawnReq{cmd: cmd, atExec: atExec, group: group, pol: pol, done: make(chan error, 1)}
	spawnCh <- req
	err = <-req.done
	return req.release, err
}

type spawnReq struct {
	cmd     *exec.Cmd
	atExec  func(pid int) error
	group   *procgroup.Group
	pol     *sandbox.Policy
	release func()
	done    chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan *spawnReq
)

// leaders are the plugin processes this process started and has not
// reaped: os/exec waits for them, so the sweep must not.
var leaders = struct {
	mu sync.Mutex
	m  map[int]bool
}{m: map[int]bool{}}

var pluginCookie = []byte(sdk.Handshake.MagicCookieKey + "=" + sdk.Handshake.MagicCookieValue)

// sweepAdopted ends the orphans of dead plugins that this process (a
// subreaper) adopted: children that carry the plugin cookie and are not
// a plugin we started. Holding leaders.mu keeps a plugin being started
// from looking like an orphan.
func sweepAdopted() {
	leaders.mu.Lock()
	defer leaders.mu.Unlock()
	sdk.KillAdopted(func(pid int) bool { return leaders.m[pid] || !pluginDescendant(pid) })
}

// tail keeps the last bytes a plugin wrote to stderr, for start and crash
// messages.
type tail struct {
	mu    sync.Mutex
	buf   []byte
	panic string // the "panic: ..." line, which a long trace pushes out of buf
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	if bytes.HasPrefix(p, []byte("panic: ")) || bytes.HasPrefix(p, []byte("fatal error: ")) {
		t.panic = string(trimNL(p))
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tail) panicLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.panic
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lineLog sends the plugin's synced stdout/stderr (writes to os.Stdout and
// os.Stderr after Serve) to the host log.
type lineLog struct {
	l      hclog.Logger
	stream string
}

func (w lineLog) Write(p []byte) (int, error) {
	if w.l.IsDebug() {
		w.l.Debug("plugin output", "stream", w.stream, "text", string(trimNL(p)))
	}
	return len(p), nil
}

func trimNL(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
