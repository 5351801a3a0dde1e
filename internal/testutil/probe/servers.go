package probe

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
)

// Servers are the test's side of Try: loopback servers for the tcp,
// mptcp, udp and unix ops that answer every connection with one byte
// (every datagram with its echo) and count what reached them.
type Servers struct {
	addrs map[string]string
	hits  map[string]*atomic.Int64
	close []func() error
}

// Serve opens a TCP, an MPTCP and a UDP server on 127.0.0.1, a Unix
// socket at unixPath and an abstract one named abstract (without the @;
// none when empty). Close them with Close.
func Serve(unixPath, abstract string) (*Servers, error) {
	s := &Servers{addrs: map[string]string{}, hits: map[string]*atomic.Int64{}}
	var mp net.ListenConfig
	mp.SetMultipathTCP(true)
	streams := []struct {
		key, network, addr string
		lc                 net.ListenConfig
	}{
		{"tcp", "tcp", "127.0.0.1:0", net.ListenConfig{}},
		{"mptcp", "tcp", "127.0.0.1:0", mp},
		{"unix", "unix", unixPath, net.ListenConfig{}},
		{"abstract", "unix", "@" + abstract, net.ListenConfig{}},
	}
	for _, st := range streams {
		if st.addr == "@" || st.addr == "" {
			continue
		}
		l, err := st.lc.Listen(context.Background(), st.network, st.addr)
		if err != nil {
			s.Close()
			return nil, err
		}
		n := new(atomic.Int64)
		s.addrs[st.key], s.hits[st.key] = l.Addr().String(), n
		if st.key == "abstract" {
			s.addrs[st.key] = "@" + abstract
		}
		s.close = append(s.close, l.Close)
		go answerCounting(l, n)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	n := new(atomic.Int64)
	s.addrs["udp"], s.hits["udp"] = pc.LocalAddr().String(), n
	s.close = append(s.close, pc.Close)
	go func() {
		b := make([]byte, 64)
		for {
			k, from, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			n.Add(1)
			pc.WriteTo(b[:k], from)
		}
	}()
	return s, nil
}

// Addr is the address to give Try for the server of key: tcp, mptcp,
// udp, unix or abstract.
func (s *Servers) Addr(key string) string { return s.addrs[key] }

// Hits is how many connections (datagrams, for udp) reached the server
// of key so far.
func (s *Servers) Hits(key string) int64 {
	if n := s.hits[key]; n != nil {
		return n.Load()
	}
	return 0
}

// Close stops every server.
func (s *Servers) Close() error {
	var errs []error
	for _, c := range s.close {
		errs = append(errs, c())
	}
	s.close = nil
	return errors.Join(errs...)
}

func answerCounting(l net.Listener, n *atomic.Int64) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		n.Add(1)
		c.Write([]byte("x"))
		c.Close()
	}
}

func answer(l net.Listener) { answerCounting(l, new(atomic.Int64)) }
