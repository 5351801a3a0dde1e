package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
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
