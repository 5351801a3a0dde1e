package catalog

import (
	"net/http"
)

// npxCommand is the npx skills add line for sk, "" when npx skills cannot
// fetch its source.
func (s *server) npxCommand(r *http.Request, sk Skill) string {
	if s.Token == "" && s.inIndex(r.Context(), sk) {
		// The catalog's own well-known index serves it (npx skills
		// sends no token).
		return "npx skills add " + shellQuote(baseURL(r)) + " --skill " + shellQuote(sk.Name)
	}
	if sk.Kind != KindGit && sk.Kind != KindIndex {
		return ""
	}
	return "npx skills add " + shellQuote(sk.Source) + " --skill " + shellQuote(sk.Name)
}
