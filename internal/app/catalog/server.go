package catalog

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/agentskills/agent/internal/ground/httpguard"
)

// Limits of the search API.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// maxQuery bounds the query text read.
	maxQuery = 256
)

// tokenCookie carries the token of a browser that opened ?token=.
const tokenCookie = "agent_catalog_token"

// ServerOptions configure Handler.
type ServerOptions struct {
	DB *DB
	// Token, when set, is asked of every request: a bearer token, or the
	// cookie a browser gets by opening the page with ?token=.
	Token string
	// Refresh rebuilds the index (POST /api/refresh); nil serves none.
	Refresh func(ctx context.Context) error
}

// Handler serves a catalog, read-only: GET /api/search (the skills.sh
// search API), the web page (/ and /skill?id=) and the well-known
// discovery index (wellknown.go). Host and Origin are checked as for
// agent mcp --http.
func Handler(o ServerOptions) http.Handler {
	s := &server{ServerOptions: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/search", s.search)
	mux.HandleFunc("POST /api/refresh", s.refresh)
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /skill", s.skillPage)
	mux.HandleFunc("GET "+wellKnownIndex, s.wellKnownIndex)
	mux.HandleFunc("GET "+wellKnownSkill, s.wellKnownSkill)
	return httpguard.Host(httpguard.Origin(s.auth(mux)))
}

type server struct {
	ServerOptions
	refreshing sync.Mutex
	wk         wellKnownCache
}

func (s *server) auth(next http.Handler) http.Handler {
	if s.Token == "" {
		return next
	}
	ok := func(t string) bool { return subtle.ConstantTimeCompare([]byte(t), []byte(s.Token)) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "bearer") && ok(strings.TrimSpace(tok)) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && ok(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && ok(t) && r.Method == http.MethodGet {
			// A browser keeps the token in a cookie and loses it from
			// the address bar (and from the history).
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="agent catalog"`)
		http.Error(w, "this catalog needs its token: send Authorization: Bearer <token>, or open the page with ?token=<token>", http.StatusUnauthorized)
	})
}

// apiSkill is one entry of the search answer: the skills.sh fields, and
// what this catalog knows besides (clients ignore unknown fields).
type apiSkill struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Installs    int    `json:"installs"`
	Source      string `json:"source"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Signed      bool   `json:"signed,omitempty"`
	Install     string `json:"install,omitempty"`
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := q.Get("q")
	if len(query) > maxQuery {
		query = query[:maxQuery]
	}
	limit := DefaultLimit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		limit = min(l, MaxLimit)
	}
	skills, err := s.DB.Search(r.Context(), query, limit)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out := struct {
		Skills []apiSkill `json:"skills"`
	}{Skills: make([]apiSkill, 0, len(skills))}
	for _, sk := range skills {
		// installs stays 0: npx skills sorts by it, and equal counts
		// keep this catalog's relevance order (its sort is stable).
		out.Skills = append(out.Skills, apiSkill{ID: sk.ID, Name: sk.Name, Source: sk.Source, Description: sk.Description,
			Version: sk.Version, Signed: sk.Signed, Install: AddCommand(sk)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *server) refresh(w http.ResponseWriter, r *http.Request) {
	if s.Refresh == nil {
		http.Error(w, "this catalog is not refreshed on demand", http.StatusNotFound)
		return
	}
	if !s.refreshing.TryLock() {
		http.Error(w, "a refresh is running", http.StatusConflict)
		return
	}
	defer s.refreshing.Unlock()
	if err := s.Refresh(r.Context()); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_, n, _ := s.DB.Refreshed(r.Context())
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"skills\":%d}\n", n)
}

// AddCommand is the agent skill add line that installs s.
func AddCommand(s Skill) string {
	return "agent skill add " + shellQuote(s.ID)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=,%^", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// baseURL is the address the request reached this server at.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: r.Host}).String()
}
