package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/agentskills/agent/internal/app/workspace"
)

// IOStreams is where a command reads and writes. Commands never touch
// os.Stdout directly, so tests can read buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // data
	ErrOut io.Writer // messages, warnings, progress

	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool

	// lines buffers In for answers to questions, so that several questions
	// in one command never lose typed-ahead input between readers.
	lines *bufio.Reader
}

// ReadLine reads one line of input, for answers to questions.
func (s *IOStreams) ReadLine() (string, error) {
	if s.lines == nil {
		s.lines = bufio.NewReader(s.In)
	}
	return s.lines.ReadString('\n')
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// TestIO returns streams backed by buffers, with no terminal.
func TestIO() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// CanPrompt reports whether a question can be asked and answered.
func (s *IOStreams) CanPrompt() bool { return s.StdinTTY && s.StderrTTY }

// Progress is where registry operations report progress: stderr on a
// terminal, nowhere otherwise (nil), so logs and CI output stay quiet.
func (s *IOStreams) Progress() io.Writer {
	if s.StderrTTY {
		return s.ErrOut
	}
	return nil
}

// Warn prints a warning on stderr. Warnings quote SKILL.md files, so what
// a terminal would obey in them is shown escaped.
func (s *IOStreams) Warn(msg string) {
	fmt.Fprintf(s.ErrOut, "warning: %s\n", workspace.EscapeTerminal(msg))
}
