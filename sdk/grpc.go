package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	skillv1 "github.com/agentskills/agent/proto/skill/v1"
)

// PluginName is the name under which a skill is dispensed over go-plugin.
const PluginName = "skill"

// ProtocolVersion is the newest version of the plugin protocol
// (proto/skill/v1 and the handshake) this SDK speaks; it speaks every
// version from OldestProtocol on, and go-plugin settles on the newest that
// host and plugin share. A host refuses, at install, a plugin whose
// protocol it does not speak, naming both versions. Raise it only for a
// change an older host or plugin cannot understand.
//
//   - 1: a call's own deadline travels in gRPC metadata (MetadataDeadline).
//   - 2: it travels in InvokeRequest, which costs a warm call less.
const ProtocolVersion = 2

// OldestProtocol is the oldest protocol version this SDK speaks: plugins
// built before version 2 keep working with this host, and plugins built
// with this SDK with hosts before it.
const OldestProtocol = 1

// Handshake is shared by the host and every plugin. A binary started
// without the cookie in its environment explains that it is a plugin and
// exits instead of serving.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "AGENT_SKILL_PLUGIN",
	MagicCookieValue: "9f1c6b3e-skill-v1",
}

// EnvLogLevel carries the host's log level to the plugin, so that a plugin
// does not format debug lines the host would drop.
const EnvLogLevel = "AGENT_PLUGIN_LOG_LEVEL"

// ErrTransport marks a failure to reach the plugin (the process died, the
// connection broke, the deadline passed in transit). The gRPC client
// returns every such failure wrapped with it; a tool's own failure is an
// *Error instead.
var ErrTransport = errors.New("plugin connection failed")

// PluginSets are the go-plugin plugin sets for a skill, one per protocol
// version this SDK speaks (go-plugin's VersionedPlugins). A plugin passes
// its Skill; the host passes nil and only dispenses clients. gRPC only.
func PluginSets(impl Skill) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, ProtocolVersion-OldestProtocol+1)
	for v := OldestProtocol; v <= ProtocolVersion; v++ {
		sets[v] = plugin.PluginSet{PluginName: &grpcPlugin{impl: impl, version: v}}
	}
	return sets
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl    Skill
	version int
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return errors.New("sdk: PluginSets(nil) cannot serve; pass the Skill")
	}
	skillv1.RegisterSkillServer(s, &grpcServer{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &grpcClient{c: skillv1.NewSkillClient(c), version: p.version}, nil
}

// grpcServer exposes a Skill as the skill.v1 service.
type grpcServer struct {
	skillv1.UnimplementedSkillServer
	impl Skill
}

func (s *grpcServer) Describe(ctx context.Context, _ *skillv1.DescribeRequest) (*skillv1.DescribeResponse, error) {
	infos, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, err
	}
	resp := &skillv1.DescribeResponse{Tools: make([]*skillv1.Tool, len(infos))}
	for i, t := range infos {
		resp.Tools[i] = &skillv1.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Title: t.Title, Annotations: t.Annotations.marshal(), OutputSchema: t.OutputSchema}
	}
	return resp, nil
}

// MetadataDeadline is the gRPC metadata key of a call's own deadline
// (unix nanoseconds, decimal) in protocol 1; protocol 2 sends it in
// InvokeRequest. Either way the host cancels the gRPC call only later, so
// that it can still hear the answer of a handler that stopped when it
// was canceled; a plugin is killed only if no answer comes by then.
const MetadataDeadline = "agent-deadline"

// WithCallDeadline returns a context whose calls give the plugin's handler
// the deadline dl, while the gRPC call itself lives as long as ctx (a
// host that hears whether a canceled handler stopped). For hosts.
func WithCallDeadline(ctx context.Context, dl time.Time) context.Context {
	return context.WithValue(ctx, callDeadlineKey{}, dl.UnixNano())
}

type callDeadlineKey struct{}

func (s *grpcServer) Invoke(ctx context.Context, req *skillv1.InvokeRequest) (*skillv1.InvokeResponse, error) {
	calls.Add(1)
	ns := req.GetDeadlineUnixNano()
	if ns == 0 { // a host of protocol 1
		if v := metadata.ValueFromIncomingContext(ctx, MetadataDeadline); len(v) == 1 {
			ns, _ = strconv.ParseInt(v[0], 10, 64)
		}
	}
	if ns != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Unix(0, ns))
		defer cancel()
	}
	beginSpans(ctx)
	res, err := s.impl.Invoke(ctx, req.GetTool(), req.GetArguments())
	endSpans(ctx)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeToolFailed, Message: err.Error()}
		}
		return &skillv1.InvokeResponse{Error: &skillv1.Error{Code: e.Code, Message: e.Message}}, nil
	}
	return &skillv1.InvokeResponse{Result: res.Value, Message: res.Message}, nil
}

// grpcClient is the host's view of a plugin: a Skill whose calls cross the
// process boundary.
type grpcClient struct {
	c       skillv1.SkillClient
	version int // the protocol go-plugin settled on
}

var _ Skill = (*grpcClient)(nil)

func (c *grpcClient) Describe(ctx context.Context) ([]ToolInfo, error) {
	resp, err := c.c.Describe(ctx, &skillv1.DescribeRequest{}, grpc.MaxCallRecvMsgSize(MaxResultSize))
	if err != nil {
		return nil, fmt.Errorf("%w: describe: %w", ErrTransport, err)
	}
	infos := make([]ToolInfo, len(resp.GetTools()))
	for i, t := range resp.GetTools() {
		infos[i] = ToolInfo{Name: t.GetName(), Description: t.GetDescription(), InputSchema: t.GetInputSchema(),
			Title: t.GetTitle(), Annotations: unmarshalAnnotations(t.GetAnnotations()), OutputSchema: t.GetOutputSchema()}
	}
	return infos, nil
}

// MaxResultSize bounds a plugin's answer as the host receives it. go-plugin
// lets a gRPC client accept 2 GiB messages, so without it a plugin
// returning 100 MB costs the host several times that in memory; past the
// limit the call fails with codes.ResourceExhausted instead.
const MaxResultSize = 16 << 20

func (c *grpcClient) Invoke(ctx context.Context, tool string, args json.RawMessage) (Result, error) {
	req := &skillv1.InvokeRequest{Tool: tool, Arguments: args}
	if dl, ok := ctx.Value(callDeadlineKey{}).(int64); ok {
		if c.version >= 2 {
			req.DeadlineUnixNano = dl
		} else {
			ctx = metadata.AppendToOutgoingContext(ctx, MetadataDeadline, strconv.FormatInt(dl, 10))
		}
	}
	resp, err := c.c.Invoke(ctx, req, grpc.MaxCallRecvMsgSize(MaxResultSize))
	if err != nil {
		return Result{}, fmt.Errorf("%w: invoke %s: %w", ErrTransport, tool, err)
	}
	if e := resp.GetError(); e != nil {
		return Result{}, &Error{Code: e.GetCode(), Message: e.GetMessage()}
	}
	return Result{Value: resp.GetResult(), Message: resp.GetMessage()}, nil
}
