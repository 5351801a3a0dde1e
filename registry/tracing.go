package registry

import (
	"context"
	"errors"
	"net/url"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/registry/gitsrc"
)

var tracer = otel.Tracer(semconv.Scope)

// startFetchSpan starts the span of one fetch (git, OCI or a mirror, and
// the signature check), named fetch {url}: add, update and sync show it
// as a child of the command (SPEC §17).
func startFetchSpan(ctx context.Context, rawURL, ref string) (context.Context, trace.Span) {
	shown := withoutUserinfo(rawURL)
	ctx, span := tracer.Start(ctx, "fetch "+shown)
	if span.IsRecording() {
		span.SetAttributes(semconv.VCSRepositoryURL.String(shown))
		if ref != "" {
			span.SetAttributes(semconv.VCSRefHeadName.String(ref))
		}
	}
	return ctx, span
}

func endFetchSpan(span trace.Span, snap *gitsrc.Snapshot, err error) {
	if span.IsRecording() {
		if snap != nil && snap.Commit != "" {
			span.SetAttributes(semconv.VCSRefHeadRevision.String(snap.Commit))
		}
		if snap != nil && snap.Fetched != "" {
			span.SetAttributes(semconv.AgentFetchPath.String(snap.Fetched))
		}
		if err != nil {
			span.SetAttributes(semconv.ErrorType.String(errorKind(err)))
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// withoutUserinfo drops a user and password from a URL: a span is no
// place for a token.
func withoutUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// fetchErrorTypes name a fetch's failures for error.type (low cardinality).
var fetchErrorTypes = []struct {
	err  error
	name string
}{
	{gitsrc.ErrRepoNotFound, "repo_not_found"},
	{gitsrc.ErrRefNotFound, "ref_not_found"},
	{gitsrc.ErrNoMatchingVersion, "no_matching_version"},
	{gitsrc.ErrAuthRequired, "auth_required"},
	{gitsrc.ErrUnreachable, "unreachable"},
	{gitsrc.ErrUnsupportedSource, "unsupported_source"},
	{gitsrc.ErrTooLarge, "too_large"},
	{gitsrc.ErrUnsafeEntry, "unsafe_entry"},
	{ErrNotVerified, "not_verified"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "timeout"},
}

func errorKind(err error) string {
	for _, e := range fetchErrorTypes {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return semconv.ErrorOther
}
