// Command crashy is the reliability suite's hostile Go plugin. Its work
// tool panics or exits for a fixed, predictable share of inputs (see
// fate), hang blocks, big returns a huge result, and version reports which
// commit it was built from.
//
// With RELIABILITY_MARK set it appends its pid to that file at start-up, so
// a test can prove that a binary never ran.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentskills/agent/sdk"
)

// fate decides what work does with input i: "exit" for 1% of inputs,
// "panic" for 10%, "ok" otherwise. The suite holds a copy to predict it.
func fate(i int) string {
	x := uint64(i) * 0x9E3779B97F4A7C15
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	switch r := x % 100; {
	case r == 0:
		return "exit"
	case r <= 10:
		return "panic"
	}
	return "ok"
}

type workIn struct {
	I int `json:"i"`
}

type workOut struct {
	I   int `json:"i"`
	PID int `json:"pid"`
}

type hangIn struct {
	Seconds      int  `json:"seconds,omitempty"`
	IgnoreCancel bool `json:"ignore_cancel,omitempty"`
}

type daemonIn struct {
	Token string `json:"token"`
	Hang  bool   `json:"hang,omitempty"`
}

type bigIn struct {
	MB int `json:"mb"`
}

func main() {
	if p := os.Getenv("RELIABILITY_MARK"); p != "" {
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	sdk.Serve(sdk.NewSkill(
		sdk.NewTool("work", "Do unit i of work; some units crash the plugin.", func(ctx context.Context, in workIn) (workOut, error) {
			switch fate(in.I) {
			case "exit":
				os.Exit(7)
			case "panic":
				panic(fmt.Sprintf("crashy: unit %d panics", in.I))
			}
			return workOut{I: in.I, PID: os.Getpid()}, nil
		}),
		sdk.NewTool("hang", "Block for the given seconds (default: until canceled).", func(ctx context.Context, in hangIn) (string, error) {
			d := time.Duration(in.Seconds) * time.Second
			if d == 0 {
				d = time.Hour
			}
			if in.IgnoreCancel {
				time.Sleep(d)
				return "done", nil
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(d):
				return "done", nil
			}
		}),
		sdk.NewTool("daemon", "Start a daemon tagged with token (sh starts it in a new session and exits); with hang, block until canceled.", func(ctx context.Context, in daemonIn) (string, error) {
			script := `setsid python3 -c 'import time; time.sleep(600)' "$0" </dev/null >/dev/null 2>&1 &`
			if err := exec.Command("/bin/sh", "-c", script, in.Token).Run(); err != nil {
				return "", err
			}
			if in.Hang {
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "started", nil
		}),
		sdk.NewTool("big", "Return a string of mb megabytes.", func(ctx context.Context, in bigIn) (string, error) {
			return strings.Repeat("x", in.MB<<20), nil
		}),
		sdk.NewTool("version", "Say which version this binary was built from.", func(ctx context.Context, _ struct{}) (string, error) {
			return Version, nil
		}),
	))
}
