package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/testutil/fakemodel"
)

// openPTY opens a pseudo-terminal pair: the test holds the master, the
// agent gets the slave as stdin and stderr, so it asks as it does a
// person.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// screen collects what the agent writes to the terminal.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestRunApprovalShowsWholeCall: `agent run` on a terminal asks before a
// shell_command, and the question holds the whole call, however long,
// with control characters escaped; the call that runs is the one shown,
// even when the model sends a key twice. Before, a 321-character workdir
// of ./././ pushed `touch PWNED_HIDDEN_CMD` past a 300-character cut.
func TestRunApprovalShowsWholeCall(t *testing.T) {
	t.Parallel()
	agent := buildAgent(t)
	workdir := "." + strings.Repeat("/.", 160) // 321 characters
	for _, tc := range []struct {
		name   string
		args   string
		answer string
		shown  []string // each must be on screen
		hidden []string // none may be on screen
		made   string   // the file the approved command makes
	}{
		{
			name:   "321-character workdir refused",
			args:   `{"workdir":"` + workdir + `","command":"touch PWNED_HIDDEN_CMD"}`,
			answer: "n",
			shown:  []string{`"command":"touch PWNED_HIDDEN_CMD"`, `"workdir":"` + workdir + `"`},
		},
		{
			name:   "321-character workdir approved",
			args:   `{"workdir":"` + workdir + `","command":"touch PWNED_HIDDEN_CMD"}`,
			answer: "y",
			shown:  []string{`"command":"touch PWNED_HIDDEN_CMD"`},
			made:   "PWNED_HIDDEN_CMD",
		},
		{
			name:   "escape sequences are shown, not obeyed",
			args:   `{"command":"touch ESCAPED \u001b[2K\u001b[1Gecho harmless \u009b2K \u202e"}`,
			answer: "y",
			shown:  []string{`touch ESCAPED \u001b[2K\u001b[1Gecho harmless \u009b2K \u202e`},
			hidden: []string{"\x1b[2K", "\u009b", "\u202e"},
			made:   "ESCAPED",
		},
		{
			name:   "a key given twice shows the value that runs",
			args:   `{"command":"echo harmless","command":"touch TWICE"}`,
			answer: "y",
			shown:  []string{`{"command":"touch TWICE"}`},
			hidden: []string{"echo harmless"},
			made:   "TWICE",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			srv, err := fakemodel.Start(
				fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "shell_command", Args: tc.args}}},
				fakemodel.Reply{Text: "done"},
			)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			master, slave := openPTY(t)
			cmd := exec.Command(agent, "run", "--events=none", "--model", "anthropic/fake", "go")
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "AGENT_HOME="+filepath.Join(filepath.Dir(work), "home"), "AGENT_WORKSPACE="+work,
				"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.AnthropicURL())
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, slave
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			scr := &screen{}
			copied := make(chan struct{})
			go func() { _, _ = io.Copy(scr, master); close(copied) }()
			deadline := time.Now().Add(2 * time.Minute)
			for !strings.Contains(scr.String(), "[y/N]") {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					t.Fatalf("no question on the terminal:\n%q", scr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The question, not the progress line before it (which
			// shows the call as the model sent it, cut).
			question := scr.String()
			question = question[strings.LastIndex(question, "allow shell_command"):]
			if _, err := master.Write([]byte(tc.answer + "\n")); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("agent run: %v\nterminal:\n%s", err, scr.String())
			}
			// The terminal shows the question unwrapped: the pty inserts
			// nothing in a long line.
			for _, s := range tc.shown {
				if !strings.Contains(question, s) {
					t.Errorf("the question does not show %q:\n%q", s, question)
				}
			}
			for _, s := range tc.hidden {
				if strings.Contains(question, s) {
					t.Errorf("the question holds %q raw:\n%q", s, question)
				}
			}
			entries, _ := os.ReadDir(work)
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			for _, f := range []string{"PWNED_HIDDEN_CMD", "ESCAPED", "TWICE"} {
				exists := strings.Contains(strings.Join(files, "\n"), f)
				if exists != (f == tc.made) {
					t.Errorf("after answering %q the workspace holds %q", tc.answer, files)
				}
			}
			reqs := srv.Requests()
			if tc.answer == "n" && (len(reqs) < 2 || !strings.Contains(reqs[1].LastResults()[0].Content, "not_approved")) {
				t.Errorf("the refusal did not reach the model as not_approved")
			}
			_ = master.Close()
			<-copied
		})
	}
}
