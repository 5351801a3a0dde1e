package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/ground/jsontext"
)

// maxLine bounds one inbound message, as go-sdk's DefaultMaxLineLength.
const maxLine = sdkmcp.DefaultMaxLineLength

// lineTransport is newline-delimited JSON-RPC over a reader and a writer,
// as go-sdk's StdioTransport, framed and decoded with less garbage: see
// docs/design.md ("MCP stdio transport"). go-sdk still does all of MCP
// above the connection; this only turns lines into jsonrpc messages and
// back.
//
// go-sdk's ioConn decodes each line up to three times with a decoder that
// allocates a fresh 32 KiB buffer each time (batch attempt, message,
// method), and re-encodes (re-compacts) every response's already compact
// result before writing it. Here a line is read into a reused buffer,
// decoded once with encoding/json, and a response is written as its
// frame around the result go-sdk marshalled.
type lineTransport struct {
	r io.ReadCloser
	w io.Writer
}

func (t *lineTransport) Connect(context.Context) (sdkmcp.Connection, error) {
	return &lineConn{
		r:        t.r,
		w:        t.w,
		incoming: make(chan inbound),
		closed:   make(chan struct{}),
	}, nil
}

type inbound struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

type lineConn struct {
	r        io.ReadCloser
	w        io.Writer
	incoming chan inbound
	queue    []jsonrpc.Message // the rest of a batch; reads are serialized

	writeMu sync.Mutex
	out     []byte // reused frame buffer, under writeMu

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*lineBatch

	cancelled cancelled // calls whose answer is not written

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	// Reads block in a goroutine of their own, started by the first
	// Read, so that Close unblocks Read even when the underlying read of
	// stdin cannot be interrupted (go-sdk#224).
	startOnce sync.Once
	claim     func(jsonrpc.Message) (run func(), ok bool) // see setInline
}

// inliner is a connection whose reading goroutine can run calls itself.
type inliner interface {
	// setInline makes the reading goroutine offer each message it reads
	// (batches aside) to claim, before the first Read. A message claimed
	// is not returned by Read: the reader runs run, which answers it,
	// before it reads on, unless run takes longer than inlineFor or more
	// input is already buffered; then another goroutine reads on. It
	// reports false when the connection cannot (a wrapper of another).
	setInline(claim func(jsonrpc.Message) (run func(), ok bool)) bool
}

// inlineFor is how long a call run by the reading goroutine may hold up
// reading (a cancel, a concurrent call) before another goroutine reads.
// A warm tools/call takes a few tenths of a millisecond, and each
// goroutine its line passed through on the way cost a thread wakeup
// (docs/benchmarks.md, "one goroutine, one P").
const inlineFor = time.Millisecond

func (c *lineConn) setInline(claim func(jsonrpc.Message) (func(), bool)) bool {
	c.claim = claim
	return true
}

// lineReader is the state of reading the input; one goroutine at a time
// reads with it.
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer, reused
}

// lineBatch gathers the responses to one incoming JSON-RPC batch (MCP
// before 2025-06-18), which are written together as one array.
type lineBatch struct {
	pending   int
	index     map[jsonrpc.ID]int
	responses []*jsonrpc.Response
}

var _ sdkmcp.Connection = (*lineConn)(nil)

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) readLoop(r *lineReader) {
	var follow *time.Timer // hands reading over to a new goroutine
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.long = append(r.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(r.long) <= maxLine {
				line, err = r.br.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			if len(r.long) > maxLine {
				err = fmt.Errorf("an inbound JSON-RPC message is longer than %d bytes", maxLine)
			}
			line = r.long
			if cap(r.long) > 1<<20 {
				r.long = nil // do not hold on to one huge message
			}
		}
		var in inbound
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 && (err == nil || err == io.EOF) {
			in.msgs, in.batch, in.err = decodeLine(trimmed)
			if in.err == nil && len(in.msgs) == 0 {
				continue
			}
			if run, ok := c.claimed(in, err); ok {
				if r.br.Buffered() > 0 {
					go c.readLoop(r)
					run()
					return
				}
				if follow == nil {
					follow = time.AfterFunc(inlineFor, func() { c.readLoop(r) })
				} else {
					follow.Reset(inlineFor)
				}
				run()
				if !follow.Stop() {
					return // another goroutine reads now
				}
				continue
			}
		} else if err == nil {
			continue // a blank line
		}
		if in.err == nil && err != nil && len(in.msgs) == 0 {
			in.err = err
		}
		select {
		case c.incoming <- in:
		case <-c.closed:
			return
		}
		if err != nil {
			if in.err != err { // the last line had no newline: EOF follows it
				select {
				case c.incoming <- inbound{err: err}:
				case <-c.closed:
				}
			}
			return
		}
	}
}

// claimed offers a single message, read whole, to the claim of
// setInline, and notes a claimed call for the cancellation of its answer.
func (c *lineConn) claimed(in inbound, readErr error) (run func(), ok bool) {
	if c.claim == nil || readErr != nil || in.err != nil || in.batch {
		return nil, false
	}
	if run, ok = c.claim(in.msgs[0]); ok {
		c.cancelled.read(in.msgs[0])
	}
	return run, ok
}

func decodeLine(line []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	if line[0] != '[' {
		m, err := decodeMessage(line)
		if err != nil {
			return nil, false, err
		}
		return []jsonrpc.Message{m}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, true, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, true, errors.New("empty batch")
	}
	for _, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, true, err
		}
		msgs = append(msgs, m)
	}
	return msgs, true, nil
}

// decodeMessage is jsonrpc.DecodeMessage with one decoding pass, into a
// map so that keys match exactly, as in go-sdk ("ID" is not "id"). A
// present but empty method still makes a request, as in go-sdk.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if err := unmarshalField(w, "jsonrpc", &version); err != nil {
		return nil, err
	}
	if version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if err := unmarshalField(w, "id", &rawID); err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if raw := w["method"]; len(raw) > 0 {
		var method string
		if err := json.Unmarshal(raw, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w["params"]}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("invalid request: a message with neither method nor id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w["result"]}
	var wireErr *jsonrpc.Error
	if err := unmarshalField(w, "error", &wireErr); err != nil {
		return nil, err
	}
	if wireErr != nil {
		resp.Error = wireErr
	}
	return resp, nil
}

func unmarshalField(w map[string]json.RawMessage, key string, v any) error {
	raw, ok := w[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("unmarshaling jsonrpc message: %s: %w", key, err)
	}
	return nil
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.startOnce.Do(func() { go c.readLoop(&lineReader{br: bufio.NewReaderSize(c.r, 64<<10)}) })
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		c.cancelled.read(m)
		return m, nil
	}
	var in inbound
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if in.err != nil {
		return nil, in.err
	}
	if in.batch {
		b := &lineBatch{index: map[jsonrpc.ID]int{}}
		for _, m := range in.msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				if _, dup := b.index[req.ID]; dup {
					return nil, fmt.Errorf("duplicate message ID %v in a batch", req.ID.Raw())
				}
				b.index[req.ID] = len(b.responses)
				b.responses = append(b.responses, nil)
			}
		}
		if len(b.responses) > 0 {
			c.batchMu.Lock()
			if c.batches == nil {
				c.batches = map[jsonrpc.ID]*lineBatch{}
			}
			for id := range b.index {
				if _, ok := c.batches[id]; ok {
					c.batchMu.Unlock()
					return nil, fmt.Errorf("batch contains previously seen request %v", id.Raw())
				}
			}
			b.pending = len(b.responses)
			for id := range b.index {
				c.batches[id] = b
			}
			c.batchMu.Unlock()
		}
	}
	c.queue = in.msgs[1:]
	c.cancelled.read(in.msgs[0])
	return in.msgs[0], nil
}

// batched records resp if it answers a batch; done is the whole batch
// once its last response arrived.
func (c *lineConn) batched(resp *jsonrpc.Response) (done []*jsonrpc.Response, ok bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	b.responses[b.index[resp.ID]] = resp
	if b.pending--; b.pending > 0 {
		return nil, true
	}
	return b.responses, true
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	out := c.out[:0]
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		// A batch is answered whole, cancelled members included.
		cancelled := c.cancelled.drop(resp)
		if batch, ok := c.batched(resp); ok {
			if batch == nil {
				return nil
			}
			out = append(out, '[')
			for i, r := range batch {
				if i > 0 {
					out = append(out, ',')
				}
				if out, err = appendResponse(out, r); err != nil {
					return err
				}
			}
			out = append(out, ']')
		} else if cancelled {
			return nil
		} else if out, err = appendResponse(out, resp); err != nil {
			return err
		}
	} else {
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return fmt.Errorf("marshaling message: %w", err)
		}
		out = append(out, data...)
	}
	out = append(out, '\n')
	_, err = c.w.Write(out)
	if cap(out) <= 1<<20 { // keep a buffer for small and medium answers only
		c.out = out
	}
	return err
}

// appendResponse appends resp's wire form, with the fields in go-sdk's
// order. The result is go-sdk's own json.Marshal output, compact and
// valid, so it is copied as it is instead of being compacted again.
func appendResponse(out []byte, resp *jsonrpc.Response) ([]byte, error) {
	out = append(out, `{"jsonrpc":"2.0"`...)
	switch id := resp.ID.Raw().(type) {
	case nil:
	case int64:
		out = append(out, `,"id":`...)
		out = strconv.AppendInt(out, id, 10)
	default:
		b, err := jsontext.Marshal(id)
		if err != nil {
			return out, fmt.Errorf("marshaling message id: %w", err)
		}
		out = append(out, `,"id":`...)
		out = append(out, b...)
	}
	if len(resp.Result) > 0 {
		out = append(out, `,"result":`...)
		out = append(out, resp.Result...)
	}
	if resp.Error != nil {
		b, err := jsontext.Marshal(wireError(resp.Error))
		if err != nil {
			return out, fmt.Errorf("marshaling message error: %w", err)
		}
		out = append(out, `,"error":`...)
		out = append(out, b...)
	}
	return append(out, '}'), nil
}

// wireError is how go-sdk puts an error on the wire: a jsonrpc.Error as it
// is, another error as its message with the code of a wrapped one.
func wireError(err error) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.r.Close()
		close(c.closed)
	})
	return c.closeErr
}
