package catalog

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newTestServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	d, err := Open(t.TempDir() + "/catalog.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	skills := []Skill{
		{ID: "file:///team#skills/pdf", Name: "pdf", Description: "Fill PDF forms.", Source: "file:///team", Path: "skills/pdf", Kind: KindGit, Audit: "1 medium",
			Manifest: "---\nname: pdf\n---\n# PDF\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>\n"},
		{ID: "oci://127.0.0.1:5000/team/stamp:1.0.0", Name: "stamp", Description: "Stamps PDF pages.", Source: "oci://127.0.0.1:5000/team/stamp", Kind: KindOCI},
	}
	if err := d.Replace(context.Background(), skills, time.Now()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(ServerOptions{DB: d, Token: token}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestSearchAPIShape(t *testing.T) {
	srv := newTestServer(t, "")
	resp, body := get(t, srv, "/api/search?q=pdf&limit=20", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got APIAnswer
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Skills) != 2 || got.Skills[0].Name != "pdf" || got.Skills[0].ID != "file:///team#skills/pdf" || got.Skills[0].Source != "file:///team" {
		t.Fatalf("answer %s", body)
	}
	// What this host's own client reads back.
	parsed, err := ParseAnswer([]byte(body))
	if err != nil || len(parsed) != 2 || parsed[1].Description != "Stamps PDF pages." {
		t.Fatalf("ParseAnswer = %+v, %v", parsed, err)
	}
}

func TestServerGuards(t *testing.T) {
	srv := newTestServer(t, "")
	tests := []struct {
		name   string
		method string
		header http.Header
		want   int
	}{
		{"plain", "GET", nil, 200},
		{"loopback origin", "GET", http.Header{"Origin": {"http://127.0.0.1:9"}}, 200},
		{"foreign origin", "GET", http.Header{"Origin": {"https://evil.example"}}, 403},
		{"rebound host", "GET", http.Header{"Host": {"evil.example"}}, 403},
		{"localhost host", "GET", http.Header{"Host": {"localhost"}}, 200},
		{"put", "PUT", nil, 405},
		{"delete", "DELETE", nil, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+"/api/search?q=pdf", nil)
			for k, v := range tt.header {
				req.Header[k] = v
			}
			if h := tt.header.Get("Host"); h != "" {
				req.Host = h
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

func TestServerToken(t *testing.T) {
	srv := newTestServer(t, "s3cret")
	resp, _ := get(t, srv, "/api/search?q=pdf", nil)
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("without the token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp, _ := get(t, srv, "/", http.Header{"Authorization": {"Bearer wrong"}}); resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %d", resp.StatusCode)
	}
	if resp, _ := get(t, srv, "/api/search?q=pdf", http.Header{"Authorization": {"Bearer s3cret"}}); resp.StatusCode != 200 {
		t.Fatalf("the bearer token: %d", resp.StatusCode)
	}
	resp, _ = get(t, srv, "/?q=pdf&token=s3cret", nil)
	if resp.StatusCode != http.StatusSeeOther || strings.Contains(resp.Header.Get("Location"), "s3cret") {
		t.Fatalf("?token=: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := resp.Header.Get("Set-Cookie")
	if !strings.Contains(cookie, "HttpOnly") {
		t.Fatalf("cookie %q", cookie)
	}
	name, _, _ := strings.Cut(cookie, ";")
	if resp, body := get(t, srv, "/?q=pdf", http.Header{"Cookie": {name}}); resp.StatusCode != 200 || !strings.Contains(body, "Fill PDF forms.") {
		t.Fatalf("with the cookie: %d", resp.StatusCode)
	}
}

func TestSkillPageIsSafe(t *testing.T) {
	srv := newTestServer(t, "")
	resp, body := get(t, srv, "/skill?id=file%3A%2F%2F%2Fteam%23skills%2Fpdf", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	article := body[strings.Index(body, "<article>"):strings.Index(body, "</article>")]
	for _, bad := range []string{"<script", "javascript:", "onerror", "<img"} {
		if strings.Contains(article, bad) {
			t.Errorf("the rendered SKILL.md holds %q:\n%s", bad, article)
		}
	}
	for _, want := range []string{"<h1>PDF</h1>", "agent skill add &#39;file:///team#skills/pdf&#39;", "npx skills add " + srv.URL + " --skill pdf", "data-copy=", "<th>Audit</th><td>1 medium (agent skill audit)</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if resp, _ := get(t, srv, "/skill?id=nope", nil); resp.StatusCode != 404 {
		t.Errorf("unknown skill: %d", resp.StatusCode)
	}
}

func TestListingWithoutJavaScript(t *testing.T) {
	srv := newTestServer(t, "")
	_, body := get(t, srv, "/?q=stamp", nil)
	if !strings.Contains(body, `href="/skill?id=oci%3a%2f%2f127.0.0.1%3a5000%2fteam%2fstamp%3a1.0.0">stamp</a>`) || strings.Contains(body, ">pdf</a>") {
		t.Fatalf("the server-rendered listing for q=stamp:\n%s", body)
	}
}

// TestRenderMarkdownIsSafe: hostile SKILL.md bodies render to HTML that
// runs nothing (checked by parsing it, not by looking for strings).
func TestRenderMarkdownIsSafe(t *testing.T) {
	tests := []struct{ name, src string }{
		{"script block", "<script>alert(1)</script>"},
		{"inline html", "hi <img src=x onerror=alert(1)> <svg onload=alert(1)>"},
		{"javascript link", "[x](javascript:alert(1))"},
		{"mixed case scheme", "[x](JaVaScRiPt:alert(1))"},
		{"entity in scheme", "[x](&#106;avascript:alert(1))"},
		{"tab in scheme", "[x](java\tscript:alert(1))"},
		{"autolink", "<javascript:alert(1)>"},
		{"reference link", "[x][1]\n\n[1]: javascript:alert(1)"},
		{"image", "![x](javascript:alert(1))"},
		{"data html", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"},
		{"vbscript", "[x](vbscript:msgbox(1))"},
		{"iframe and style", "<iframe src=//evil></iframe><style>body{display:none}</style>"},
		{"code fence", "```html\n<script>alert(1)</script>\n```"},
		{"html in table", "| a |\n|---|\n| <script>alert(1)</script> |"},
		{"front matter", "---\nname: x\ndescription: <script>alert(1)</script>\n---\nbody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bad := unsafeHTML(string(RenderMarkdown(tt.src))); bad != "" {
				t.Errorf("%s in\n%s", bad, RenderMarkdown(tt.src))
			}
		})
	}
}
