package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
	"github.com/agentskills/agent/internal/telemetry"
)

// Defaults of Options.
const (
	// DefaultIdleTimeout is how long a plugin may sit unused before it is
	// stopped; its next call starts it again.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultProgressInterval is how often a call with a progress token
	// gets an elapsed-time notification.
	DefaultProgressInterval = time.Second
	// reloadDelay gathers the several writes of one registry change.
	reloadDelay = 100 * time.Millisecond
)

// Names of the tools the server adds itself.
const (
	CallTool = "call_tool" // --lazy: call any active tool by name
)

// Options configure a Server.
type Options struct {
	// Load builds the workspace; it is called at start and after every
	// registry change. It must not start a process.
	Load func(context.Context) (*workspace.Workspace, error)
	// Home is AGENT_HOME; its skills/registry.json is watched. "" watches
	// nothing.
	Home string
	// Lazy lists only use_skill, call_tool and the script tools (SPEC §13).
	Lazy bool
	// IdleTimeout stops a plugin unused this long; 0 means
	// DefaultIdleTimeout, a negative value never stops one.
	IdleTimeout time.Duration
	// ProgressInterval is the period of progress notifications; 0 means
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// CallTimeout bounds one tool call; 0 keeps the workspace's deadline
	// policy (5 minutes, more for a script with a longer limit).
	CallTimeout time.Duration
	// Version is the agent's version, reported as the server's.
	Version string
	// Logger receives the server's own logs (never stdout); nil discards.
	Logger *slog.Logger
	// PageSize is the page of skills/list and resources/directory/read;
	// 0 means DefaultPageSize.
	PageSize int
}

// Server serves one workspace at a time over MCP.
type Server struct {
	opts Options
	srv  *sdkmcp.Server
	impl *sdkmcp.Implementation
	log  *slog.Logger
	// viaSDK sends every tools/call through go-sdk's dispatch instead of
	// directCalls (tests compare the two); direct counts the calls
	// directCalls answered.
	viaSDK bool
	direct atomic.Int64

	swapMu sync.Mutex // one swap at a time; guards the three sets below

	// life ends when the server closes; every call's context ends with
	// it, so that a client that went away (stdin EOF) cancels its plugin
	// calls instead of leaving them to run out.
	life     context.Context
	endCalls context.CancelFunc

	// sessions end their calls when the client closes the session (an
	// HTTP DELETE, or a stdio EOF): go-sdk does not cancel them then.
	sessMu   sync.Mutex
	sessions map[*sdkmcp.ServerSession]sessionCalls

	lists listCache // tools/list, prepared once per change

	mu        sync.RWMutex
	gen       *generation
	tools     map[string]bool // names added to srv
	prompts   map[string]bool
	resources map[string]bool
	closed    bool
}

// generation is one loaded workspace and the calls using it.
type generation struct {
	ws    *workspace.Workspace
	calls sync.WaitGroup
	// trees are the active skills' files, by canonical name.
	trees  map[string]*skillTree
	skills skillCatalog
	tools  map[string]serverTool // as tools/list shows them
}

// New loads the workspace and builds the server. It starts no process.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ws, err := opts.Load(ctx)
	if err != nil {
		return nil, err
	}
	life, endCalls := context.WithCancel(context.Background())
	s := &Server{
		life:      life,
		endCalls:  endCalls,
		opts:      opts,
		log:       log,
		tools:     map[string]bool{},
		prompts:   map[string]bool{},
		resources: map[string]bool{},
	}
	// Advertise every list with listChanged even while it is empty: a
	// skill added later fills it.
	caps := &sdkmcp.ServerCapabilities{
		Tools:     &sdkmcp.ToolCapabilities{ListChanged: true},
		Prompts:   &sdkmcp.PromptCapabilities{ListChanged: true},
		Resources: &sdkmcp.ResourceCapabilities{ListChanged: true},
	}
	s.addSkillsExtension(caps)
	s.impl = &sdkmcp.Implementation{Name: "agent", Version: opts.Version}
	s.srv = sdkmcp.NewServer(s.impl, &sdkmcp.ServerOptions{
		Logger:       log,
		Capabilities: caps,
		Instructions: instructions(ws),
	})
	s.registerSkillsMethods()
	s.srv.AddReceivingMiddleware(s.lists.middleware)
	if telemetry.Enabled() {
		s.srv.AddReceivingMiddleware(traceRequests) // outermost: cached lists get spans too
	}
	s.swap(ws)
	return s, nil
}

// MCP returns the go-sdk server, to connect transports to.
func (s *Server) MCP() *sdkmcp.Server { return s.srv }

// instructions is Layer 1: what every MCP client may put in context.
func instructions(ws *workspace.Workspace) string {
	text, _, _, err := ws.Layer1(disclosure.BudgetFor(0))
	if err != nil {
		return ""
	}
	return text
}

// Reload loads the workspace again and serves it; go-sdk tells every
// session that tools, prompts and resources changed. The old workspace's
// plugins stop once its running calls return.
func (s *Server) Reload(ctx context.Context) error {
	ws, err := s.opts.Load(ctx)
	if err != nil {
		return err
	}
	s.swap(ws)
	return nil
}

// swap makes ws current and replaces the features it exposes.
func (s *Server) swap(ws *workspace.Workspace) {
	for _, w := range ws.Warnings {
		s.log.Warn(w)
	}
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	tools := s.toolSet(ws)
	gen := &generation{ws: ws, trees: skillTrees(ws, s.bundledDir(), s.log), tools: tools}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	old := s.gen
	s.gen = gen
	s.mu.Unlock()

	s.tools = replace(s.tools, tools, func(names []string) { s.srv.RemoveTools(names...) }, func(name string) {
		t := tools[name]
		s.srv.AddTool(t.tool, t.handler)
	})
	s.lists.invalidate()
	prompts := s.promptSet(ws)
	s.prompts = replace(s.prompts, prompts, func(names []string) { s.srv.RemovePrompts(names...) }, func(name string) {
		p := prompts[name]
		s.srv.AddPrompt(p.prompt, p.handler)
	})
	resources := s.resourceSet(gen)
	s.resources = replace(s.resources, resources, func(uris []string) { s.srv.RemoveResources(uris...) }, func(uri string) {
		r := resources[uri]
		s.srv.AddResource(r.resource, r.handler)
	})
	if old != nil {
		go func() {
			old.calls.Wait()
			old.ws.Close()
		}()
	}
}

// replace removes what is gone and adds (again) everything in next: a
// re-added feature may have changed, and go-sdk folds the notifications.
func replace[T any](cur map[string]bool, next map[string]T, remove func([]string), add func(string)) map[string]bool {
	var gone []string
	for name := range cur {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		remove(gone)
	}
	names := make([]string, 0, len(next))
	for name := range next {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string]bool, len(names))
	for _, name := range names {
		add(name)
		out[name] = true
	}
	return out
}

// acquire returns the current workspace for one call; release must be
// called when the call is over.
func (s *Server) acquire() (*generation, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.gen == nil {
		return nil, errors.New("the server is shutting down")
	}
	s.gen.calls.Add(1)
	return s.gen, nil
}

// handler is the tools/call handler of the tool listed as name, or nil.
func (s *Server) handler(name string) sdkmcp.ToolHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.gen == nil {
		return nil
	}
	return s.gen.tools[name].handler
}

// StopIdle stops plugins unused for the idle timeout; Serve calls it.
func (s *Server) StopIdle() {
	if s.opts.IdleTimeout < 0 {
		return
	}
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	if gen == nil {
		return
	}
	for _, name := range gen.ws.StopIdle(s.opts.IdleTimeout) {
		s.log.Info("stopped idle plugin", "plugin", name, "idle", s.opts.IdleTimeout)
	}
}

// Close stops every plugin after the running calls return.
func (s *Server) Close() {
	s.mu.Lock()
	gen := s.gen
	s.closed = true
	s.gen = nil
	s.mu.Unlock()
	s.endCalls()
	if gen != nil {
		gen.calls.Wait()
		gen.ws.Close()
	}
}

// Run serves the background work of a long-lived server until ctx ends:
// reloading on registry changes and stopping idle plugins.
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if s.opts.Home != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := watchRegistry(ctx, s.opts.Home, s.log, func() {
				if err := s.Reload(ctx); err != nil {
					s.log.Error("reload skills after a registry change; still serving the previous ones", "err", err)
					return
				}
				s.log.Info("skills changed; sent list_changed")
			}); err != nil {
				s.log.Warn("registry changes will not be noticed until restart", "err", err)
			}
		}()
	}
	if s.opts.IdleTimeout > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(max(s.opts.IdleTimeout/4, 50*time.Millisecond))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					s.StopIdle()
				}
			}
		}()
	}
	wg.Wait()
}

// callContext ends with the request, its session or the server; the
// call's deadline is the workspace's (Options.CallTimeout replaces it).
func (s *Server) callContext(ctx context.Context, ss *sdkmcp.ServerSession) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stopLife := context.AfterFunc(s.life, cancel)
	if ss == nil { // a direct call: its session's end is s.life's
		return ctx, func() { stopLife(); cancel() }
	}
	stopSess := context.AfterFunc(s.sessionContext(ss), cancel)
	return ctx, func() { stopSess(); stopLife(); cancel() }
}

type sessionCalls struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// endSession cancels the calls of the session with this id. go-sdk's
// session Close waits for running calls before it closes, so a client's
// DELETE would otherwise wait for them instead of ending them.
func (s *Server) endSession(id string) {
	if id == "" {
		return
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for ss, sc := range s.sessions {
		if ss.ID() == id {
			sc.cancel()
		}
	}
}

// sessionContext is done when ss closes; one goroutine per session waits
// for that.
func (s *Server) sessionContext(ss *sdkmcp.ServerSession) context.Context {
	if ss == nil {
		return s.life
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if sc, ok := s.sessions[ss]; ok {
		return sc.ctx
	}
	if s.sessions == nil {
		s.sessions = map[*sdkmcp.ServerSession]sessionCalls{}
	}
	ctx, cancel := context.WithCancel(s.life)
	s.sessions[ss] = sessionCalls{ctx: ctx, cancel: cancel}
	go func() {
		_ = ss.Wait()
		cancel()
		s.sessMu.Lock()
		delete(s.sessions, ss)
		s.sessMu.Unlock()
	}()
	return ctx
}

// progress sends elapsed-time notifications for req until stop is called,
// when the client asked for them with a progress token.
func (s *Server) progress(ctx context.Context, req *sdkmcp.CallToolRequest, tool string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		tick := time.NewTicker(s.opts.ProgressInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				el := time.Since(start)
				_ = req.Session.NotifyProgress(ctx, &sdkmcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      el.Seconds(),
					Message:       fmt.Sprintf("%s running for %s", tool, el.Round(100*time.Millisecond)),
				})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// errorResult is a tool error: isError with its code and message, as JSON
// text and as structured content.
func errorResult(code, msg string) *sdkmcp.CallToolResult {
	v := map[string]string{"error": code, "message": msg}
	b, _ := json.Marshal(v)
	return &sdkmcp.CallToolResult{
		IsError:           true,
		Content:           []sdkmcp.Content{&sdkmcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// bundledDir is where bundled skills' SKILL.md are copied to be served
// as files: $AGENT_HOME/state/bundled, "" without a home.
func (s *Server) bundledDir() string {
	if s.opts.Home == "" {
		return ""
	}
	return filepath.Join(s.opts.Home, "state", "bundled")
}
