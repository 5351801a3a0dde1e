package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentskills/agent/internal/ground/platform"
)

// Option adds a guarantee, or a cost, to a write.
type Option func(*config)

type config struct {
	sync, syncDir, umask bool
	beforeReplace        func()
}

// Sync flushes the file to disk before the rename, so that after a power
// cut the target holds the old content or the new, never an empty file.
func Sync() Option { return func(c *config) { c.sync = true } }

// SyncDir is Sync, and flushes the folder after the rename too, so that
// the new name itself survives a power cut. Some file systems refuse to
// flush a folder; that is not an error.
func SyncDir() Option { return func(c *config) { c.sync, c.syncDir = true, true } }

// Umask filters perm through the process umask, as os.WriteFile does,
// instead of applying it as given: for files written on a user's behalf.
func Umask() Option { return func(c *config) { c.umask = true } }

// BeforeReplace calls f when the temporary file is complete and not yet
// renamed: crash tests stop the process there.
func BeforeReplace(f func()) Option { return func(c *config) { c.beforeReplace = f } }

// Write replaces the file at path with data, with permissions perm (as
// given, whatever the umask, unless Umask). The folder must exist. On
// failure the old file is left as it was and the temporary file removed.
func Write(path string, data []byte, perm fs.FileMode, opts ...Option) error {
	return write(osDir{}, path, data, perm, opts)
}

// WriteIn is Write for the file name inside root: the temporary file, the
// rename and the folder flush all go through root, so neither can reach
// outside it.
func WriteIn(root *os.Root, name string, data []byte, perm fs.FileMode, opts ...Option) error {
	return write(root, name, data, perm, opts)
}

// dir is what a write needs of a folder tree: *os.Root, or osDir for
// plain paths.
type dir interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Open(name string) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
}

type osDir struct{}

func (osDir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return platform.OpenFile(name, flag, perm)
}
func (osDir) Open(name string) (*os.File, error)   { return os.Open(name) }
func (osDir) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osDir) Remove(name string) error             { return os.Remove(name) }

// rename moves the complete temporary file over the target. Tests
// replace it. On Windows a rename over a file that another process holds
// open without FILE_SHARE_DELETE (what Go's os.Open does: an agent
// reading registry.json, a virus scanner, an indexer) fails, so there it
// is retried while heldOpen says so, for up to renameBudget.
var rename = func(d dir, oldname, newname string) error {
	return retry(func() error { return d.Rename(oldname, newname) }, heldOpen, sleep)
}

// heldOpen reports a rename refused because the target is open elsewhere
// (rename_windows.go); elsewhere nothing is, and it is always false.
// sleep waits between attempts. Both are variables for tests.
var (
	heldOpen = renameHeldOpen
	sleep    = time.Sleep
)

// renameBudget bounds the waiting for a reader to close the target: long
// enough for a scanner or another agent to finish reading, short enough
// that a file held open for good (or a real access denial, which Windows
// reports with the same code) fails the write in a few seconds.
const renameBudget = 2 * time.Second

// retry runs op until it succeeds, fails for a reason busy does not
// accept, or renameBudget has been slept; the waits double from 1 ms up
// to 250 ms.
func retry(op func() error, busy func(error) bool, sleep func(time.Duration)) error {
	delay, slept := time.Millisecond, time.Duration(0)
	for {
		err := op()
		if err == nil || !busy(err) || slept >= renameBudget {
			return err
		}
		sleep(delay)
		slept += delay
		delay = min(2*delay, 250*time.Millisecond)
	}
}

func write(d dir, name string, data []byte, perm fs.FileMode, opts []Option) error {
	var c config
	for _, o := range opts {
		o(&c)
	}
	f, tmp, err := create(d, name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && !c.umask {
		err = f.Chmod(perm)
	}
	if err == nil && c.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && c.beforeReplace != nil {
		c.beforeReplace()
	}
	if err == nil {
		err = rename(d, tmp, name)
	}
	if err != nil {
		_ = d.Remove(tmp)
		return err
	}
	if c.syncDir {
		if df, err := d.Open(filepath.Dir(name)); err == nil {
			_ = df.Sync()
			df.Close()
		}
	}
	return nil
}

// create makes the temporary file beside name, exclusively: a file or a
// link already there under the chosen name is never opened.
func create(d dir, name string, perm fs.FileMode) (*os.File, string, error) {
	prefix := filepath.Join(filepath.Dir(name), "."+strings.TrimPrefix(filepath.Base(name), ".")+".tmp-")
	for range 10000 {
		tmp := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, tmp, err
		}
	}
	return nil, "", &fs.PathError{Op: "createtemp", Path: prefix + "*", Err: fs.ErrExist}
}
