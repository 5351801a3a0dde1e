//go:build linux && !portable

package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Parent is a cgroup directory this process may create groups in.
type Parent struct {
	dir string
	seq atomic.Int64
}

// Dir is the parent's directory.
func (p *Parent) Dir() string { return p.dir }

// Group is one cgroup of a process tree, made by Parent.New.
type Group struct {
	dir string
	fd  int
	mu  sync.Mutex
}

// Detect returns this process's own cgroup v2 directory, checked to be
// one it can create groups in and move its children into.
func Detect() (string, error) {
	own, err := ownPath()
	if err != nil {
		return "", err
	}
	mnt, root, err := unifiedMount()
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, own)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%w: this process's cgroup %s is outside the mounted cgroup2 tree %s", ErrUnavailable, own, root)
	}
	dir := filepath.Join(mnt, rel)
	// A child moved below dir moves out of it: both cgroup.procs files
	// must be writable, and dir itself for mkdir.
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs")} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return "", fmt.Errorf("%w: %s is not writable by this user (%v); a cgroup delegated to the user (systemd Delegate=yes) would be", ErrUnavailable, p, err)
		}
	}
	return dir, nil
}

// ownPath is this process's cgroup v2 path ("0::/path" in /proc/self/cgroup).
func ownPath() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: /proc/self/cgroup has no cgroup v2 line", ErrUnavailable)
}

// unifiedMount finds a cgroup2 mount: its mount point and the cgroup
// path at its root.
func unifiedMount() (mnt, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		return unescape(fields[4]), unescape(fields[3]), nil
	}
	return "", "", fmt.Errorf("%w: no cgroup2 file system is mounted", ErrUnavailable)
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Local is this process's own cgroup as a Parent, without a session or a
// watcher: for a plugin that the host already started in a group of its
// own, which the host kills with everything below it.
func Local() (*Parent, error) {
	local.once.Do(func() {
		dir, err := Detect()
		if err == nil {
			err = probeKill(dir)
		}
		local.p, local.err = &Parent{dir: dir}, err
	})
	return local.p, local.err
}

var local struct {
	once sync.Once
	p    *Parent
	err  error
}

// Shared is this process's session: a group agent.<pid>.<n> below its own
// cgroup, made once, holding every group that New makes, and killed by a
// watcher when this process dies, even by SIGKILL.
func Shared() (*Parent, error) {
	shared.once.Do(func() { shared.p, shared.err = newSession() })
	return shared.p, shared.err
}

var shared struct {
	once sync.Once
	p    *Parent
	err  error
}

func newSession() (*Parent, error) {
	own, err := Detect()
	if err != nil {
		return nil, err
	}
	sweepStale(own)
	dir := filepath.Join(own, fmt.Sprintf("agent.%d.%d", os.Getpid(), time.Now().UnixNano()%1e6))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("%w: the kernel has no cgroup.kill (Linux 5.14 or later has)", ErrUnavailable)
	}
	if err := startWatcher(dir); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("%w: start the cgroup watcher: %v", ErrUnavailable, err)
	}
	return &Parent{dir: dir}, nil
}

// probeKill checks that groups made in dir have cgroup.kill.
func probeKill(dir string) error {
	probe := filepath.Join(dir, fmt.Sprintf("probe.%d.%d", os.Getpid(), time.Now().UnixNano()%1e6))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return fmt.Errorf("%w: the kernel has no cgroup.kill (Linux 5.14 or later has)", ErrUnavailable)
	}
	return nil
}

// watcherScript waits for EOF on stdin, the pipe whose write end only the
// host holds, then kills the session and removes its (emptied) folders.
// It ignores the signals a terminal sends a whole session.
const watcherScript = `trap '' HUP INT TERM QUIT PIPE
while read -r _; do :; done
echo 1 >"$1/cgroup.kill" 2>/dev/null
i=0
while [ -d "$1" ] && [ $i -lt 200 ]; do
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
	i=$((i+1))
	sleep 0.05
done
`

// watcherW is the pipe's write end, kept open (and referenced) for the
// life of the process.
var watcherW *os.File

func startWatcher(dir string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watcherScript, "agent-cgroup-watch", dir)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	// Never waited for: it exits only once this process is gone.
	watcherPID.Store(int64(cmd.Process.Pid))
	_ = cmd.Process.Release()
	watcherW = w
	return nil
}

// WatcherPID is the watcher's pid, or 0: so that a sweep of adopted
// children can keep it.
func WatcherPID() int { return int(watcherPID.Load()) }

var watcherPID atomic.Int64

// sweepStale removes the emptied session folders of dead hosts that no
// watcher removed (a watcher killed too). It never kills: a folder whose
// host is in another pid namespace would look dead here.
func sweepStale(own string) {
	entries, err := os.ReadDir(own)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "agent.") {
			continue
		}
		pid, _, _ := strings.Cut(strings.TrimPrefix(name, "agent."), ".")
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue
		}
		removeTree(filepath.Join(own, name))
	}
}

// removeTree removes a cgroup folder and its child groups, deepest first;
// populated groups stay.
func removeTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeTree(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.Remove(dir)
}

// New makes a group below p named prefix-N.
func (p *Parent) New(prefix string) (*Group, error) {
	dir := filepath.Join(p.dir, fmt.Sprintf("%s-%d", prefix, p.seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return &Group{dir: dir, fd: fd}, nil
}

// Dir is the group's folder.
func (g *Group) Dir() string { return g.dir }

// Attach makes attr start its process in g (clone3 CLONE_INTO_CGROUP):
// the child is in the group before it runs a single instruction.
func (g *Group) Attach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = g.fd
}

// Kill SIGKILLs every process in the group and its child groups.
func (g *Group) Kill() error {
	err := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // already removed
	}
	return err
}

// Populated reports whether a process is still in the group or below it.
func (g *Group) Populated() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.events"))
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// Procs lists the processes in the group itself.
func (g *Group) Procs() []int {
	b, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// Members lists the processes in the group and its child groups. Read
// it before Kill: a killed process leaves its group at once, even while
// it is still a zombie for its parent to reap.
func (g *Group) Members() []int { return members(g.dir, nil) }

func members(dir string, pids []int) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			pids = members(filepath.Join(dir, e.Name()), pids)
		}
	}
	return pids
}

// Close kills the group, waits (at most limit) until its processes are
// gone, and removes its folder. Safe to call more than once.
func (g *Group) Close(limit time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd < 0 {
		return nil
	}
	err := g.Kill()
	for deadline := time.Now().Add(limit); g.Populated() && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	removeTree(g.dir)
	_ = unix.Close(g.fd)
	g.fd = -1
	if _, serr := os.Stat(g.dir); serr == nil && err == nil {
		err = fmt.Errorf("cgroup %s still holds processes %v after %v", g.dir, g.Procs(), limit)
	}
	return err
}
