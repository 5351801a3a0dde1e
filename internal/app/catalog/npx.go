package catalog

import (
	"net/http"
)

// npxCommand is the npx skills add line for sk, "" when npx skills cannot
// fetch its source.
func (s *server) npxCommand(r *http.Request, sk Skill) string {
	if sk.Kind != KindGit && sk.Kind != KindIndex {
		return ""
	}
	return "npx skills add " + shellQuote(sk.Source) + " --skill " + shellQuote(sk.Name)
}
