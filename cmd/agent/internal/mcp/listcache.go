package mcp

import (
	"context"
	"encoding/json"
	"sync"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listCache answers tools/list from the JSON of go-sdk's own answer,
// marshalled once per registry change: with 300 tools, marshalling the
// list (every schema compacted twice) is most of a list's cost, and the
// list only changes when swap changes the tools.
type listCache struct {
	mu      sync.Mutex
	version uint64 // bumped by invalidate
	res     *cachedList
}

// cachedList is go-sdk's ListToolsResult with its JSON prepared. It embeds
// the result so that it is an sdkmcp.Result; MarshalJSON hands go-sdk the
// prepared bytes instead of walking 300 tools again.
type cachedList struct {
	*sdkmcp.ListToolsResult
	raw json.RawMessage
}

func (c *cachedList) MarshalJSON() ([]byte, error) { return c.raw, nil }

// invalidate drops the prepared list; swap calls it after changing the
// tools, so that the next tools/list builds it again.
func (c *listCache) invalidate() {
	c.mu.Lock()
	c.version++
	c.res = nil
	c.mu.Unlock()
}

// middleware serves plain tools/list requests (first page, no _meta) from
// the cache. Others go to go-sdk as they are: a cursor asks for another
// page, and _meta may carry the per-request protocol version, for which
// go-sdk annotates the result it returns.
func (c *listCache) middleware(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		lr, ok := req.(*sdkmcp.ListToolsRequest)
		if method != "tools/list" || !ok || (lr.Params != nil && (lr.Params.Cursor != "" || len(lr.Params.Meta) > 0)) {
			return next(ctx, method, req)
		}
		c.mu.Lock()
		res, version := c.res, c.version
		c.mu.Unlock()
		if res != nil {
			return res, nil
		}
		r, err := next(ctx, method, req)
		if err != nil {
			return r, err
		}
		list, ok := r.(*sdkmcp.ListToolsResult)
		if !ok || list.NextCursor != "" {
			return r, nil
		}
		raw, err := json.Marshal(list)
		if err != nil {
			return r, nil
		}
		res = &cachedList{ListToolsResult: list, raw: raw}
		c.mu.Lock()
		// A swap that ran while go-sdk listed may have changed the tools
		// half-way: keep only a list built entirely after the last one.
		if c.version == version {
			c.res = res
		}
		c.mu.Unlock()
		return res, nil
	}
}
