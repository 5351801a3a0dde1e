package mcp

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MCP: "Receivers of a cancellation notification SHOULD NOT send a
// response for the cancelled request." go-sdk v1.8.0's jsonrpc2 always
// writes one (go-sdk #1235, #1259; PR #1267 open), so the stdio transport
// drops it: it remembers the calls it read that are still unanswered, marks
// the ones a notifications/cancelled names, and writes nothing for them.
// Only unanswered calls are marked, so a late cancel, or an id the client
// uses again after its answer, never drops a later answer.
type cancelled struct {
	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // true once cancelled
}

// read notes a call that now awaits an answer, or a cancellation of one.
func (c *cancelled) read(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		c.mu.Lock()
		if c.inflight == nil {
			c.inflight = map[jsonrpc.ID]bool{}
		}
		c.inflight[req.ID] = false
		c.mu.Unlock()
		return
	}
	id, ok := cancelledID(req)
	if !ok {
		return
	}
	c.mu.Lock()
	if _, ok := c.inflight[id]; ok {
		c.inflight[id] = true
	}
	c.mu.Unlock()
}

// drop reports whether resp answers a cancelled call, and forgets the call.
func (c *cancelled) drop(resp *jsonrpc.Response) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was, ok := c.inflight[resp.ID]
	if ok {
		delete(c.inflight, resp.ID)
	}
	return was
}

// cancelledID is the request a notifications/cancelled names; false when
// m is another message or names no valid id.
func cancelledID(m jsonrpc.Message) (jsonrpc.ID, bool) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/cancelled" {
		return jsonrpc.ID{}, false
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}
