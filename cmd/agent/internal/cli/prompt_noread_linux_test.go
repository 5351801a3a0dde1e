//go:build linux

package cli

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openWatch records, through inotify, every file opened or read inside some
// directories. It sees real kernel events, so it works for root too (where
// chmod 000 would not stop a read) and needs no seam in the code under test.
type openWatch struct {
	fd   int
	dirs map[int32]string
}

func newOpenWatch(t *testing.T, dirs ...string) *openWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	w := &openWatch{fd: fd, dirs: map[int32]string{}}
	for _, d := range dirs {
		wd, err := unix.InotifyAddWatch(fd, d, unix.IN_OPEN|unix.IN_ACCESS)
		if err != nil {
			t.Fatalf("watch %s: %v", d, err)
		}
		w.dirs[int32(wd)] = d
	}
	return w
}

// files returns the files (not directories) opened or read since the last
// call, as paths.
func (w *openWatch) files(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EAGAIN) || n <= 0 {
			break
		}
		if err != nil {
			t.Fatalf("read inotify: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_ISDIR != 0 || name == "" {
				continue // listing a folder is not reading a file
			}
			p := filepath.Join(w.dirs[ev.Wd], name)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayersReadOnlySkillMD proves that building Layer 1 (prompt), Layer 2
// (skill show, use_skill) and the check report opens no script and no
// reference file of a skill: only its SKILL.md.
func TestLayersReadOnlySkillMD(t *testing.T) {
	home := writeFixtureHome(t, fixtureSkills())
	dir := filepath.Join(home, "skills", "good")
	skillMD := filepath.Join(dir, "SKILL.md")
	w := newOpenWatch(t, dir, filepath.Join(dir, "scripts"), filepath.Join(dir, "references"))
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "good"}
	tests := []struct {
		args []string
	}{
		{args: []string{"prompt"}},
		{args: []string{"prompt", "--json"}},
		{args: []string{"skill", "show", "good", "data.csv"}},
		{args: []string{"check"}},
		{args: []string{"call", "use_skill", `{"skill":"good","args":["data.csv"]}`}},
	}
	for _, tt := range tests {
		// Not parallel: the watch sees every process's opens.
		t.Run(strings.Join(tt.args[:min(len(tt.args), 2)], "_"), func(t *testing.T) {
			w.files(t) // drop events of the previous command
			out, errOut, code := runInProcess(t, env, tt.args...)
			if code != 0 {
				t.Fatalf("agent %v: exit %d\n%s\n%s", tt.args, code, out, errOut)
			}
			got := w.files(t)
			// SKILL.md must show up: it proves the watch works.
			if !slices.Contains(got, skillMD) {
				t.Fatalf("agent %v: the watch saw %v, not even SKILL.md", tt.args, got)
			}
			if len(got) == 1 {
				return
			}
			t.Errorf("agent %v opened %v; want only %s", tt.args, got, skillMD)
		})
	}
}
