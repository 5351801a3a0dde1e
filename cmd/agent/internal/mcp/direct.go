package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// directCalls answers the plain tools/call requests of a one-session
// transport (stdio) itself, and hands every other message to go-sdk.
//
// Why: go-sdk v1.8.0 decodes each request's params twice, each time
// through a new decoder with a fresh 32 KiB buffer, runs the call on a
// goroutine of its own behind two queues and marshals the result again;
// that was a sixth of the server's CPU per warm call and kept the warm
// tools/call above SPEC §11's 1.5× of the host's call (docs/benchmarks.md,
// "Issue 24"). Here a call is decoded once and its handler, the same one
// go-sdk would run, is called directly.
//
// Anything not certain to be answered the same way goes to go-sdk, which
// then answers as always: a session not yet initialized, params with any
// field but name, arguments (an object) and the 2026-07-28 `_meta` triple
// (so a progress token, a trace context, input responses), a protocol
// version go-sdk does not speak, a tool it does not list. Tracing off
// only: its spans come from go-sdk middleware. TestDirectCallsAnswerAsSDK
// sends the same requests both ways and compares the answers.
type directCalls struct {
	sdkmcp.Transport
	s *Server
}

func (t *directCalls) Connect(ctx context.Context) (sdkmcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	dc := &directConn{Connection: c, s: t.s, running: map[jsonrpc.ID]context.CancelFunc{}, work: make(chan func()), closed: make(chan struct{})}
	if in, ok := c.(inliner); ok {
		// stdio: a call runs on the goroutine that read its line.
		dc.inlined = in.setInline(dc.claim)
	}
	return dc, nil
}

type directConn struct {
	sdkmcp.Connection
	s *Server

	session *sdkmcp.ServerSession // once found; only claim uses it, one goroutine at a time
	inlined bool                  // the connection below calls claim as it reads

	mu      sync.Mutex
	running map[jsonrpc.ID]context.CancelFunc

	// Calls run on workers that stay for the next call: a new goroutine
	// per call spent 5% of the server's CPU growing its stack.
	work      chan func()
	closeOnce sync.Once
	closed    chan struct{}
}

// run runs job on an idle worker, or on a new one.
func (c *directConn) run(job func()) {
	select {
	case c.work <- job:
	default:
		go c.worker(job)
	}
}

func (c *directConn) worker(job func()) {
	for {
		job()
		select {
		case job = <-c.work:
		case <-c.closed:
			return
		}
	}
}

func (c *directConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

func (c *directConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return m, err
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			return m, nil
		}
		if id, ok := cancelledID(req); ok {
			c.cancel(id)
			return m, nil // go-sdk ignores an id it is not running
		}
		if c.inlined {
			return m, nil // the reader offered it to claim already
		}
		run, ok := c.claim(req)
		if !ok {
			return m, nil
		}
		c.run(run)
	}
}

// claim takes m when it is a call this connection answers: the call is
// marked running, and run answers it.
func (c *directConn) claim(m jsonrpc.Message) (run func(), ok bool) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !req.IsCall() {
		return nil, false
	}
	call, ok := c.direct(req)
	if !ok {
		return nil, false
	}
	c.mu.Lock()
	if _, dup := c.running[req.ID]; dup {
		c.mu.Unlock()
		return nil, false // go-sdk decides about a reused id
	}
	callCtx, cancel := context.WithCancel(context.Background())
	c.running[req.ID] = cancel
	c.mu.Unlock()
	id := req.ID
	return func() { c.answer(callCtx, id, call) }, true
}

// directCall is one tools/call the connection answers itself.
type directCall struct {
	handler sdkmcp.ToolHandler
	params  *sdkmcp.CallToolParamsRaw
	// modern: the request carried the 2026-07-28 triple, so the result
	// names the server in its _meta. complete: the session speaks
	// 2026-07-28, so the result says resultType "complete" (go-sdk's
	// handleMultiRoundTripResult decides by the session, not the request).
	modern, complete bool
}

// direct decides whether req is answered here, and decodes it once.
func (c *directConn) direct(req *jsonrpc.Request) (directCall, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil {
		return directCall{}, false
	}
	var call directCall
	call.params = &sdkmcp.CallToolParamsRaw{}
	for k, v := range p {
		switch k {
		case "name":
			if json.Unmarshal(v, &call.params.Name) != nil {
				return directCall{}, false
			}
		case "arguments":
			if v = bytes.TrimSpace(v); len(v) == 0 || v[0] != '{' {
				return directCall{}, false
			}
			call.params.Arguments = v
		case "_meta":
			modern, ok := protocolMeta(v)
			if !ok {
				return directCall{}, false
			}
			call.modern = modern
		default:
			return directCall{}, false
		}
	}
	// Before initialize go-sdk refuses a call, or (2026-07-28) takes the
	// session's parameters from it: the first call goes to go-sdk.
	if !c.initialized() {
		return directCall{}, false
	}
	call.complete = c.session.InitializeParams().ProtocolVersion >= modernProtocol
	call.handler = c.s.handler(call.params.Name)
	return call, call.handler != nil
}

// protocolMeta accepts a `_meta` holding the 2026-07-28 per-request
// triple (SEP-2575) that go-sdk would accept, and nothing else.
func protocolMeta(raw json.RawMessage) (modern, ok bool) {
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil || meta == nil {
		return false, false
	}
	var version string
	if json.Unmarshal(meta[sdkmcp.MetaKeyProtocolVersion], &version) != nil ||
		version < modernProtocol || !slices.Contains(sdkmcp.SupportedProtocolVersions(), version) {
		return false, false
	}
	for k, v := range meta {
		var err error
		switch k {
		case sdkmcp.MetaKeyProtocolVersion, sdkmcp.MetaKeyLogLevel:
		case sdkmcp.MetaKeyClientCapabilities:
			// go-sdk's clientCapabilitiesV2, from its exported parts.
			var caps *struct {
				sdkmcp.ClientCapabilities
				Roots *sdkmcp.RootCapabilities `json:"roots,omitempty"`
			}
			if err = json.Unmarshal(v, &caps); err == nil && caps == nil {
				return false, false
			}
		case sdkmcp.MetaKeyClientInfo:
			var info *sdkmcp.Implementation
			err = json.Unmarshal(v, &info)
		default:
			return false, false
		}
		if err != nil {
			return false, false
		}
	}
	_, hasCaps := meta[sdkmcp.MetaKeyClientCapabilities]
	return true, hasCaps // go-sdk refuses the triple without capabilities
}

// modernProtocol is the first revision whose requests carry their own
// protocol `_meta` instead of relying on initialize.
const modernProtocol = "2026-07-28"

// initialized reports whether go-sdk's one session finished initialize.
func (c *directConn) initialized() bool {
	if c.session == nil {
		n := 0
		for ss := range c.s.srv.Sessions() {
			c.session = ss
			n++
		}
		if n != 1 {
			c.session = nil
			return false
		}
	}
	return c.session.InitializeParams() != nil
}

// answer runs the call and writes its response, as go-sdk would have.
func (c *directConn) answer(ctx context.Context, id jsonrpc.ID, call directCall) {
	res, err := call.handler(ctx, &sdkmcp.CallToolRequest{Params: call.params})
	c.mu.Lock()
	c.running[id]()
	delete(c.running, id)
	c.mu.Unlock()
	resp := &jsonrpc.Response{ID: id}
	if err == nil {
		resp.Result, err = marshalCallResult(res, call, c.s.impl)
	}
	if err != nil {
		resp.Result = nil
		resp.Error = wireError(err)
	}
	c.s.direct.Add(1)
	if err := c.Connection.Write(context.Background(), resp); err != nil {
		c.s.log.Warn("write a tools/call answer", "err", err)
	}
}

// marshalCallResult is the result as go-sdk puts it on the wire: an
// empty content list rather than null, the server's info in `_meta` and
// resultType "complete" as call says.
func marshalCallResult(res *sdkmcp.CallToolResult, call directCall, impl *sdkmcp.Implementation) (json.RawMessage, error) {
	if res == nil {
		return json.RawMessage("null"), nil
	}
	if res.Content == nil {
		r := *res
		r.Content = []sdkmcp.Content{}
		res = &r
	}
	if call.modern {
		r := *res
		meta := map[string]any{}
		for k, v := range res.GetMeta() {
			meta[k] = v
		}
		if _, ok := meta[sdkmcp.MetaKeyServerInfo]; !ok {
			meta[sdkmcp.MetaKeyServerInfo] = impl
		}
		r.SetMeta(meta)
		res = &r
	}
	b, err := json.Marshal(res)
	if err != nil || !call.complete {
		return b, err
	}
	// CallToolResult marshals to an object; resultType is not settable
	// from outside go-sdk, so it is added to the object here.
	return append(b[:len(b)-1], `,"resultType":"complete"}`...), nil
}

// cancel ends the direct call a notifications/cancelled names; the
// transport then drops its answer (stdio_cancel.go).
func (c *directConn) cancel(id jsonrpc.ID) {
	c.mu.Lock()
	if cancel, ok := c.running[id]; ok {
		cancel()
	}
	c.mu.Unlock()
}
