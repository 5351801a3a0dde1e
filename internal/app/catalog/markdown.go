package catalog

import (
	"bytes"
	"html/template"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders SKILL.md bodies: goldmark in its safe mode (raw HTML
// is omitted, javascript:, vbscript:, file: and data: links but images
// are dropped) and links kept only for http, https, mailto and relative
// destinations (safeLinks). That is bluemonday's user-content policy for
// what Markdown can make; bluemonday itself was dropped because every
// agent command links this package and its package inits, with its CSS
// scanner's, cost each command about 2 ms (docs/design.md). Built on
// first use, as the page templates are, for the same reason.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 0))),
	)
})

// RenderMarkdown turns a SKILL.md (front matter and all) into HTML that
// is safe to put in a page (TestRenderMarkdownIsSafe, FuzzRenderMarkdown).
func RenderMarkdown(src string) template.HTML {
	body := src
	if rest, ok := strings.CutPrefix(strings.ReplaceAll(src, "\r\n", "\n"), "---\n"); ok {
		if i := strings.Index(rest, "\n---"); i >= 0 {
			body = rest[i+4:]
			body = strings.TrimPrefix(body, "\n")
		}
	}
	var buf bytes.Buffer
	if err := markdown().Convert([]byte(body), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(body))
	}
	return template.HTML(buf.String())
}

// safeLinks empties link and image destinations whose scheme is not
// http, https or mailto, and turns such autolinks (<ms-settings:x>) into
// their text: a browser hands unknown schemes to whatever program claims
// them.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader gmtext.Reader, _ parser.Context) {
	src := reader.Source()
	var autolinks []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			if !allowedURL(string(l.Destination)) {
				l.Destination = nil
			}
		case *ast.Image:
			if !allowedURL(string(l.Destination)) {
				l.Destination = nil
			}
		case *ast.AutoLink:
			if l.AutoLinkType == ast.AutoLinkURL && !allowedURL(string(l.URL(src))) {
				autolinks = append(autolinks, l)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, l := range autolinks {
		l.Parent().ReplaceChild(l.Parent(), l, ast.NewString(l.Label(src)))
	}
}

// allowedURL reports whether a link to u stays on the web: a relative
// link, or http, https or mailto. The scheme is read as a browser reads
// it: leading and trailing controls and spaces trimmed, tabs and newlines
// dropped anywhere (WHATWG URL), case folded.
func allowedURL(u string) bool {
	u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	i := strings.IndexByte(u, ':')
	if i < 0 {
		return true
	}
	scheme := strings.ToLower(u[:i])
	for j, c := range scheme {
		if !(c >= 'a' && c <= 'z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			// Not a scheme (":x", "a/b:c"): a relative link.
			return true
		}
	}
	return scheme == "http" || scheme == "https" || scheme == "mailto"
}
