package catalog

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"
)

// FuzzParseAnswer feeds search API answers to ParseAnswer: it never
// panics, and what it returns is clean (no control characters, bounded
// fields, a name and a source, installs never negative).
func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(`{"skills":[{"id":"o/r/pdf","name":"pdf","installs":12,"source":"o/r"}]}`))
	f.Add([]byte(`{"skills":[{"id":"o/r/x","name":"x\u001b[31m","installs":-3.5,"source":""}]}`))
	f.Add([]byte(`{"skills":[{"name":"a","installs":1e300,"source":"s","description":"d"}]}`))
	f.Add([]byte(`{"skills":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		skills, err := ParseAnswer(body)
		if err != nil {
			return
		}
		if len(skills) > maxAnswerSkills {
			t.Fatalf("%d skills", len(skills))
		}
		for _, s := range skills {
			if s.Name == "" || s.Source == "" || s.Installs < 0 || s.Kind != KindIndex {
				t.Fatalf("bad skill %+v", s)
			}
			for _, field := range []string{s.Name, s.Source, s.Description} {
				if len(field) > maxFieldLen || strings.IndexFunc(field, unicode.IsControl) >= 0 {
					t.Fatalf("unclean field %q", field)
				}
			}
			if src, _, ok := SplitID(s.ID); ok && src != s.Source {
				t.Fatalf("id %q does not name source %q", s.ID, s.Source)
			}
		}
	})
}

// FuzzRenderMarkdown: whatever a SKILL.md holds, its page runs nothing.
func FuzzRenderMarkdown(f *testing.F) {
	f.Add("# T\n\n<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>")
	f.Add("[x][1]\n\n[1]: JaVaScRiPt:alert(1)\n\n<javascript:alert(1)>")
	f.Add("---\nname: x\n---\n| a |\n|---|\n| <b onclick=x>y</b> |\n\n```\n<script>\n```")
	f.Fuzz(func(t *testing.T, src string) {
		out := string(RenderMarkdown(src))
		if bad := unsafeHTML(out); bad != "" {
			t.Fatalf("%s in %q from %q", bad, out, src)
		}
	})
}

// unsafeHTML parses h as a browser would and names the first thing in it
// that could run script: an element beyond Markdown's own, an on*
// attribute, or a link or source with a scheme other than http(s),
// mailto or a relative one. "" when there is none.
func unsafeHTML(h string) string {
	allowed := map[string]bool{"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
		"a": true, "img": true, "em": true, "strong": true, "del": true, "code": true, "pre": true, "blockquote": true,
		"ul": true, "ol": true, "li": true, "hr": true, "br": true, "table": true, "thead": true, "tbody": true,
		"tr": true, "th": true, "td": true, "input": true, "html": true, "head": true, "body": true}
	doc, err := html.Parse(strings.NewReader(h))
	if err != nil {
		return "unparseable HTML: " + err.Error()
	}
	var bad string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if bad != "" {
			return
		}
		if n.Type == html.ElementNode {
			if !allowed[n.Data] {
				bad = "element <" + n.Data + ">"
				return
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				if strings.HasPrefix(k, "on") || k == "style" || k == "srcdoc" || k == "formaction" {
					bad = "attribute " + k
					return
				}
				if k == "href" || k == "src" {
					if s := urlScheme(a.Val); s != "" && s != "http" && s != "https" && s != "mailto" {
						bad = k + " with scheme " + s
						return
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return bad
}

// urlScheme is the scheme a browser reads in a link (WHATWG URL: C0
// controls and spaces trimmed, tabs and newlines dropped anywhere, a
// scheme is a letter then letters, digits, '+', '-' or '.'), lower case;
// "" for a relative link.
func urlScheme(v string) string {
	v = strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })
	v = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(v)
	i := strings.IndexByte(v, ':')
	if i <= 0 {
		return ""
	}
	s := strings.ToLower(v[:i])
	for j, c := range s {
		if !(c >= 'a' && c <= 'z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return s
}
