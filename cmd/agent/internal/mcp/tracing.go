package mcp

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
)

var tracer = otel.Tracer(semconv.Scope)

// traceRequests is the receiving middleware that gives each request a
// SERVER span named `{mcp.method.name} {target}` (mcp.md), whose parent is
// the trace context the client put in params._meta. The handler runs under
// the span, so that a tools/call's execute_tool (Workspace.Call) is its
// child. New installs it only when tracing is on: off, a request costs
// nothing here.
func traceRequests(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		params := req.GetParams()
		if params != nil {
			if meta := params.GetMeta(); len(meta) > 0 {
				ctx = otel.GetTextMapPropagator().Extract(ctx, metaCarrier(meta))
			}
		}
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, semconv.MCPMethodName.String(method))
		name := method
		switch p := params.(type) {
		case *sdkmcp.CallToolParamsRaw:
			name += " " + p.Name
			attrs = append(attrs, semconv.GenAIToolName.String(p.Name), semconv.GenAIOperationName.String(semconv.OpExecuteTool))
		case *sdkmcp.GetPromptParams:
			name += " " + p.Name
			attrs = append(attrs, semconv.GenAIPromptName.String(p.Name))
		case *sdkmcp.ReadResourceParams:
			// The URI is not in the name: mcp.md keeps names low-cardinality.
			attrs = append(attrs, semconv.MCPResourceURI.String(p.URI))
		}
		if id, ok := requestID(ctx); ok {
			attrs = append(attrs, semconv.JSONRPCRequestID.String(id))
		}
		if r, ok := req.(interface{ ProtocolVersion() string }); ok {
			if v := r.ProtocolVersion(); v != "" {
				attrs = append(attrs, semconv.MCPProtocolVersion.String(v))
			}
		}
		transport := "pipe"
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			transport = "tcp"
		}
		attrs = append(attrs, semconv.NetworkTransport.String(transport))
		if ss, ok := req.GetSession().(*sdkmcp.ServerSession); ok && ss != nil {
			if id := ss.ID(); id != "" {
				attrs = append(attrs, semconv.MCPSessionID.String(id))
			}
		}
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		res, err := next(ctx, method, req)
		switch {
		case err != nil:
			code := errorCode(err)
			span.SetAttributes(semconv.ErrorType.String(code))
			if code != semconv.ErrorOther {
				span.SetAttributes(semconv.RPCResponseStatusCode.String(code))
			}
			span.SetStatus(codes.Error, err.Error())
		default:
			if r, ok := res.(*sdkmcp.CallToolResult); ok && r.IsError {
				span.SetAttributes(semconv.ErrorType.String(semconv.ErrorToolError))
				span.SetStatus(codes.Error, toolErrorText(r))
			}
		}
		return res, err
	}
}

// metaCarrier reads the W3C keys of params._meta for a propagator; they
// are unprefixed there (mcp.md, SEP-414).
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

var _ propagation.TextMapCarrier = metaCarrier(nil)

// errorCode is the JSON-RPC code an error is answered with, as error.type
// wants it; an error that carries none is _OTHER.
func errorCode(err error) string {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		return strconv.FormatInt(we.Code, 10)
	}
	return semconv.ErrorOther
}

// toolErrorText is the first text of a failed tool result, for the span's
// status description.
func toolErrorText(r *sdkmcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*sdkmcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// requestID is the JSON-RPC id of the request a handler serves. go-sdk
// v1.8.0 keeps it in the context under an unexported key (its streamable
// transport needs it) and has no accessor yet (streamable.go, idContextKey:
// "ForRequest" is left as a later API decision); the middleware sees
// neither the jsonrpc.Request nor the id otherwise. So this walks the
// context chain with reflect, reading values only (no unsafe), and finds
// the value stored under that key. If go-sdk renames the key, the
// attribute goes missing, and TestMCPServerSpans says so.
func requestID(ctx context.Context) (string, bool) {
	v := reflect.ValueOf(ctx)
	for range 64 { // a request's context is a few layers deep
		for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
			if v.IsNil() {
				return "", false
			}
			v = v.Elem()
		}
		if !v.IsValid() || v.Kind() != reflect.Struct {
			return "", false
		}
		if t := v.Type(); t.PkgPath() == "context" && t.Name() == "valueCtx" {
			if id, ok := idOf(v.FieldByName("key"), v.FieldByName("val")); ok {
				return id, true
			}
		}
		v = parentContext(v)
	}
	return "", false
}

var (
	contextType = reflect.TypeFor[context.Context]()
	idType      = reflect.TypeFor[jsonrpc.ID]()
)

// idOf reads a context value stored under go-sdk's idContextKey.
func idOf(key, val reflect.Value) (string, bool) {
	if key.Kind() != reflect.Interface || key.IsNil() || val.Kind() != reflect.Interface || val.IsNil() {
		return "", false
	}
	kt := key.Elem().Type()
	if kt.Name() != "idContextKey" || kt.PkgPath() != "github.com/modelcontextprotocol/go-sdk/mcp" {
		return "", false
	}
	id := val.Elem()
	if id.Type() != idType || id.NumField() != 1 {
		return "", false
	}
	raw := id.Field(0)
	if raw.Kind() != reflect.Interface || raw.IsNil() {
		return "", false
	}
	switch raw = raw.Elem(); raw.Kind() {
	case reflect.String:
		return raw.String(), true
	case reflect.Int, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(raw.Int(), 10), true
	}
	return "", false
}

// parentContext is the context a context struct wraps: its field of type
// context.Context, looked for also in embedded structs (timerCtx embeds
// cancelCtx, which embeds the parent).
func parentContext(v reflect.Value) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		f := v.Field(i)
		if t.Field(i).Type == contextType {
			return f
		}
		if t.Field(i).Anonymous && f.Kind() == reflect.Struct {
			if p := parentContext(f); p.IsValid() {
				return p
			}
		}
	}
	return reflect.Value{}
}
