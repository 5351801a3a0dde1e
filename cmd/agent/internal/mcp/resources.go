package mcp

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"os"
	"path"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
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
func (s *Server) resourceSet(gen *generation) map[string]serverResource {
	out := map[string]serverResource{}
	for _, tree := range gen.trees {
		for _, p := range tree.files {
			uri := ResourceURI(tree.name, p)
			out[uri] = serverResource{
				resource: &sdkmcp.Resource{
					URI:      uri,
					Name:     tree.name + "/" + p,
					MIMEType: mimeOf(p),
				},
				handler: s.resourceHandler(tree.name, p),
			}
		}
	}
	return out
}

// mimeOf is a skill file's MIME type: fixed for the files skills hold,
// then the system's table (where .mod is audio/x-mod, so go.mod and its
// kin are named first).
func mimeOf(p string) string {
	switch path.Base(p) {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return "text/plain"
	}
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
		if err := gen.ws.CheckFiles(skill); err != nil {
			return nil, err
		}
		dir := as.Entry.Path
		if tree := gen.trees[skill]; tree != nil {
			dir = tree.dir // a bundled skill's copy
		}
		root, err := os.OpenRoot(dir)
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
