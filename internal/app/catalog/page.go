package catalog

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"sync"
)

// pageSize is how many skills the listing shows: the first load stays
// small whatever the catalog holds.
const pageSize = 50

const style = `body{font:15px/1.5 system-ui,sans-serif;max-width:860px;margin:0 auto;padding:1em;color:#222}
a{color:#0550ae}header{display:flex;gap:1em;align-items:baseline}h1{font-size:1.3em;margin:.3em 0}
input[type=search]{width:100%;font-size:1.1em;padding:.4em;box-sizing:border-box}
ul.hits{list-style:none;padding:0}ul.hits li{padding:.5em 0;border-bottom:1px solid #ddd}
.meta{color:#666;font-size:.85em}.badge{font-size:.75em;border:1px solid #999;border-radius:3px;padding:0 .3em;margin-left:.4em}
pre,code{background:#f4f4f4;border-radius:3px}pre{padding:.6em;overflow:auto}
.install{display:flex;gap:.5em;align-items:center;margin:.3em 0}.install code{flex:1;padding:.3em}
table{border-collapse:collapse}td,th{text-align:left;padding:.2em .8em .2em 0;vertical-align:top}
article{border-top:1px solid #ddd;margin-top:1em}`

var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{if .Query}}{{.Query}} - {{end}}Skills catalog</title><style>` + style + `</style></head>
<body><header><h1><a href="/">Skills catalog</a></h1><span class="meta">{{.Count}} skills</span></header>
<form action="/" method="get" role="search"><input id="q" type="search" name="q" value="{{.Query}}" placeholder="Search skills" autofocus autocomplete="off" aria-label="Search skills"></form>
<ul class="hits" id="hits">{{range .Skills}}{{template "hit" .}}{{else}}<li>No skill matches.</li>{{end}}</ul>
<script>
const q=document.getElementById('q'),hits=document.getElementById('hits');let t;
function esc(s){return String(s||'').replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]))}
q.addEventListener('input',()=>{clearTimeout(t);t=setTimeout(async()=>{
const v=q.value;const r=await fetch('/api/search?limit={{.PageSize}}&q='+encodeURIComponent(v));if(!r.ok)return;
const j=await r.json();if(q.value!==v)return;history.replaceState(null,'',v?'/?q='+encodeURIComponent(v):'/');
hits.innerHTML=j.skills.length?j.skills.map(s=>'<li><a class="name" href="/skill?id='+encodeURIComponent(s.id)+'">'+esc(s.name)+'</a>'+(s.version?'<span class="badge">'+esc(s.version)+'</span>':'')+(s.signed?'<span class="badge">signed</span>':'')+'<div>'+esc(s.description)+'</div><div class="meta">'+esc(s.source)+'</div></li>').join(''):'<li>No skill matches.</li>';},120)});
</script></body></html>
{{define "hit"}}<li><a class="name" href="/skill?id={{.ID}}">{{.Name}}</a>{{if .Version}}<span class="badge">{{.Version}}</span>{{end}}{{if .Signed}}<span class="badge">signed</span>{{end}}<div>{{.Description}}</div><div class="meta">{{.Source}}</div></li>{{end}}
`))
})

var skillPageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("skill").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.S.Name}} - Skills catalog</title><style>` + style + `</style></head>
<body><header><h1><a href="/">Skills catalog</a> / {{.S.Name}}</h1></header>
<p>{{.S.Description}}</p>
<h2>Install</h2>
{{range .Install}}<div class="install"><code>{{.}}</code><button type="button" data-copy="{{.}}">Copy</button></div>{{end}}
<table>
<tr><th>Source</th><td>{{.S.Source}}{{if .S.Path}} ({{.S.Path}}){{end}}</td></tr>
<tr><th>Pin</th><td><code>{{.S.Pin}}</code></td></tr>
<tr><th>Versions</th><td>{{range $i, $v := .S.Versions}}{{if $i}}, {{end}}{{$v}}{{else}}none tagged{{end}}</td></tr>
<tr><th>Signer</th><td>{{if .S.Signer}}{{.S.Signer}}{{else}}not signed by an accepted key{{end}}</td></tr>
<tr><th>Audit</th><td>{{if .S.Audit}}{{.S.Audit}} (agent skill audit){{else}}not audited{{end}}</td></tr>
<tr><th>Files read</th><td>{{range .S.Permissions.FSRead}}<code>{{.}}</code> {{else}}its own folder only{{end}}</td></tr>
<tr><th>Files written</th><td>{{range .S.Permissions.FSWrite}}<code>{{.}}</code> {{else}}a temporary folder only{{end}}</td></tr>
<tr><th>Network</th><td>{{range .S.Permissions.Network}}<code>{{.}}</code> {{else}}none{{end}}</td></tr>
<tr><th>Environment</th><td>{{range .S.Permissions.Env}}<code>{{.}}</code> {{else}}none beyond the defaults{{end}}</td></tr>
</table>
<article>{{.Body}}</article>
<script>document.querySelectorAll('button[data-copy]').forEach(b=>b.addEventListener('click',()=>{navigator.clipboard.writeText(b.dataset.copy).then(()=>{b.textContent='Copied'})}))</script>
</body></html>`))
})

func (s *server) index(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query().Get("q")
	if len(query) > maxQuery {
		query = query[:maxQuery]
	}
	skills, err := s.DB.Search(r.Context(), query, pageSize)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, n, _ := s.DB.Refreshed(r.Context())
	s.render(w, pages(), map[string]any{"Query": query, "Skills": skills, "Count": n, "PageSize": pageSize})
}

func (s *server) skillPage(w http.ResponseWriter, r *http.Request) {
	sk, err := s.DB.Get(r.Context(), r.URL.Query().Get("id"))
	if errors.Is(err, ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	install := []string{AddCommand(sk)}
	if line := s.npxCommand(r, sk); line != "" {
		install = append(install, line)
	}
	s.render(w, skillPageTmpl(), map[string]any{"S": sk, "Body": RenderMarkdown(sk.Manifest), "Install": install})
}

func (s *server) render(w http.ResponseWriter, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page's own inline style and script, nothing from elsewhere.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(buf.Bytes())
}
