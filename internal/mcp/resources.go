package mcp

import (
	"context"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/workspace"
)

// ResourceScheme names skill files: skill://<name>/<path>.
const ResourceScheme = "skill"

// maxResources bounds how many files of one skill are listed, so that a
// skill with a huge tree cannot flood a client.
const maxResources = 1000

type serverResource struct {
	resource *sdkmcp.Resource
	handler  sdkmcp.ResourceHandler
}

// ResourceURI is the URI of a skill's file.
func ResourceURI(skill, rel string) string {
	u := url.URL{Scheme: ResourceScheme, Host: skill, Path: "/" + rel}
	return u.String()
}

// resourceSet lists each active skill's files (Layer 3) without reading
// them; resources/read reads one on demand.
func (s *Server) resourceSet(ws *workspace.Workspace) map[string]serverResource {
	out := map[string]serverResource{}
	for _, as := range ws.Active {
		dir := as.Entry.Path
		if dir == "" || !workspace.DirExists(dir) {
			continue
		}
		skill := as.Entry.Canonical
		n := 0
		_ = fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			if n++; n > maxResources {
				s.log.Warn("skill has too many files; the rest are not listed as resources", "skill", skill, "limit", maxResources)
				return fs.SkipAll
			}
			uri := ResourceURI(skill, p)
			out[uri] = serverResource{
				resource: &sdkmcp.Resource{
					URI:      uri,
					Name:     skill + "/" + p,
					MIMEType: mimeOf(p),
				},
				handler: s.resourceHandler(skill, p),
			}
			return nil
		})
	}
	return out
}

func mimeOf(p string) string {
	switch path.Ext(p) {
	case ".md":
		return "text/markdown"
	case ".py":
		return "text/x-python"
	case ".go":
		return "text/x-go"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "text/plain"
}

// resourceHandler reads one file through os.Root, so that a symlink that
// appeared since listing cannot lead outside the skill's folder.
func (s *Server) resourceHandler(skill, rel string) sdkmcp.ResourceHandler {
	return func(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
		gen, err := s.acquire()
		if err != nil {
			return nil, err
		}
		defer gen.calls.Done()
		as := gen.ws.Skill(skill)
		if as == nil {
			return nil, sdkmcp.ResourceNotFoundError(req.Params.URI)
		}
		root, err := os.OpenRoot(as.Entry.Path)
		if err != nil {
			return nil, fmt.Errorf("open skill %s: %w", skill, err)
		}
		defer root.Close()
		b, err := root.ReadFile(rel)
		if err != nil {
			return nil, sdkmcp.ResourceNotFoundError(req.Params.URI)
		}
		c := &sdkmcp.ResourceContents{URI: req.Params.URI, MIMEType: mimeOf(rel)}
		if isText(b) {
			c.Text = string(b)
		} else {
			c.Blob = b
		}
		return &sdkmcp.ReadResourceResult{Contents: []*sdkmcp.ResourceContents{c}}, nil
	}
}

// isText reports UTF-8 without NUL bytes.
func isText(b []byte) bool {
	return !strings.ContainsRune(string(b), 0) && strings.ToValidUTF8(string(b), "\uFFFD") == string(b)
}

func workspaceGone(name string) error {
	return fmt.Errorf("skill %s is no longer active; list the prompts again", name)
}
