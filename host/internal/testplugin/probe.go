package main

import (
	"context"
	"net"
	"os"
	"time"

	"github.com/agentskills/agent/sdk"
)

type probeIn struct {
	Op  string `json:"op" description:"read, write, tcp, mptcp, udp, unix or loopback"`
	Arg string `json:"arg,omitempty" description:"the path or address"`
}

// probe tries one access that a sandbox may deny and says "allowed" or
// the error: for the host's sandbox trials.
func probe() sdk.Tool {
	return sdk.NewTool("probe", "Try a file or network access and say whether it worked.", func(_ context.Context, in probeIn) (string, error) {
		if err := try(in.Op, in.Arg); err != nil {
			return "denied: " + err.Error(), nil
		}
		return "allowed", nil
	})
}

func try(op, arg string) error {
	switch op {
	case "read":
		_, err := os.ReadFile(arg)
		return err
	case "write":
		return os.WriteFile(arg, []byte("x"), 0o644)
	case "tmp":
		f, err := os.CreateTemp("", "probe-")
		if err != nil {
			return err
		}
		f.Close()
		return os.Remove(f.Name())
	case "tcp", "mptcp", "unix":
		d := net.Dialer{Timeout: 2 * time.Second}
		d.SetMultipathTCP(op == "mptcp")
		network := "tcp"
		if op == "unix" {
			network = "unix"
		}
		c, err := d.Dial(network, arg)
		if err != nil {
			return err
		}
		defer c.Close()
		// The server answers one byte: proof the connection arrived.
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 1))
		return err
	case "udp":
		c, err := net.Dial("udp", arg)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 16))
		return err
	case "loopback":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("x"))
				c.Close()
			}
		}()
		return try("tcp", l.Addr().String())
	}
	return sdk.Errorf("bad_op", "unknown op %q", op)
}
