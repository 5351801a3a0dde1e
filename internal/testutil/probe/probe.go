package probe

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Python is probe.py: for each argument op=target it tries op on target
// and prints a JSON object from argument to "allowed" or "denied: why".
// Its ops are Try's.
//
//go:embed probe.py
var Python string

// Ops are what Try and Python know, for a tool's description.
const Ops = "read, list, write, tmp, tcp, mptcp, udp, unix (a path, or @name for an abstract socket), loopback, proxy, ptrace (a pid), seeproc (a pid), privileged"

// Try tries op on arg and returns nil when the system let it through:
//
//   - read, list, write: a file or folder (write creates the file);
//   - tmp: a file in $TMPDIR;
//   - tcp, mptcp, unix: connect to host:port or a socket (@name is an
//     abstract one) and read the one byte Servers answers, the proof
//     that the connection arrived;
//   - udp: send a datagram to host:port and wait for Servers' echo;
//   - loopback: a server and a client on the process's own 127.0.0.1;
//   - proxy: ask the proxy in HTTPS_PROXY for a tunnel to host:port and
//     GET / through it (200 wanted);
//   - ptrace: PTRACE_SEIZE the pid (and detach);
//   - seeproc: the pid is in /proc;
//   - privileged: the process holds a capability, or lacks
//     no_new_privs or a seccomp filter.
func Try(op, arg string) error {
	switch op {
	case "read":
		_, err := os.ReadFile(arg)
		return err
	case "list":
		_, err := os.ReadDir(arg)
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
		d := net.Dialer{Timeout: 5 * time.Second}
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
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		return err
	case "udp":
		c, err := net.Dial("udp", arg)
		if err != nil {
			return err
		}
		defer c.Close()
		// A datagram leaves even where nobody can hear it (the
		// process's own loopback): only the echo proves it arrived.
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err = c.Read(make([]byte, 16))
		return err
	case "loopback":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		go answer(l)
		return Try("tcp", l.Addr().String())
	case "proxy":
		return viaProxy(arg)
	case "ptrace":
		var pid int
		if _, err := fmt.Sscan(arg, &pid); err != nil {
			return err
		}
		return seize(pid)
	case "seeproc":
		_, err := os.Stat("/proc/" + arg)
		return err
	case "privileged":
		return privileged()
	}
	return fmt.Errorf("unknown op %q (known: %s)", op, Ops)
}

// privileged returns nil when the process holds any capability, lacks
// no_new_privs or runs without a seccomp filter: what a sandboxed child
// must never be "allowed".
func privileged() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":\t")
		switch {
		case (k == "CapInh" || k == "CapPrm" || k == "CapEff" || k == "CapBnd" || k == "CapAmb") && strings.Trim(v, "0") != "":
			return nil
		case k == "NoNewPrivs" && v != "1", k == "Seccomp" && v != "2":
			return nil
		}
	}
	return errors.New("no capability, no_new_privs, seccomp")
}

// viaProxy asks the proxy named by HTTPS_PROXY for a tunnel to target
// and, when it opens one, GETs / through it.
func viaProxy(target string) error {
	u, err := url.Parse(os.Getenv("HTTPS_PROXY"))
	if err != nil || u.Host == "" {
		return fmt.Errorf("no proxy in HTTPS_PROXY (%q)", os.Getenv("HTTPS_PROXY"))
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CONNECT %s: %s", target, resp.Status)
	}
	fmt.Fprintf(c, "GET /through HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET through the tunnel: %s", resp.Status)
	}
	return nil
}
