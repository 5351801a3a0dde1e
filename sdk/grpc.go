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

// ProtocolVersion is the version of the plugin protocol (proto/skill/v1 and
// the handshake) this SDK speaks. A host refuses, at install, a plugin whose
// protocol it does not speak, naming both versions. Raise it only for a
// change an older host or plugin cannot understand.
const ProtocolVersion = 1

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

// PluginMap is the go-plugin plugin set for a skill. A plugin passes its
// Skill; the host passes nil and only dispenses clients. gRPC only.
func PluginMap(impl Skill) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &grpcPlugin{impl: impl}}
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Skill
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return errors.New("sdk: PluginMap(nil) cannot serve; pass the Skill")
	}
	skillv1.RegisterSkillServer(s, &grpcServer{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &grpcClient{c: skillv1.NewSkillClient(c)}, nil
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
// (unix nanoseconds, decimal). The host gives the gRPC call a later one,
// so that it can still hear the answer of a handler that stopped when it
// was canceled; a plugin is killed only if no answer comes by then.
const MetadataDeadline = "agent-deadline"

func (s *grpcServer) Invoke(ctx context.Context, req *skillv1.InvokeRequest) (*skillv1.InvokeResponse, error) {
	calls.Add(1)
	if v := metadata.ValueFromIncomingContext(ctx, MetadataDeadline); len(v) == 1 {
		if ns, err := strconv.ParseInt(v[0], 10, 64); err == nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, ns))
			defer cancel()
		}
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
	c skillv1.SkillClient
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
	resp, err := c.c.Invoke(ctx, &skillv1.InvokeRequest{Tool: tool, Arguments: args}, grpc.MaxCallRecvMsgSize(MaxResultSize))
	if err != nil {
		return Result{}, fmt.Errorf("%w: invoke %s: %w", ErrTransport, tool, err)
	}
	if e := resp.GetError(); e != nil {
		return Result{}, &Error{Code: e.GetCode(), Message: e.GetMessage()}
	}
	return Result{Value: resp.GetResult(), Message: resp.GetMessage()}, nil
}
