package catalog

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentskills/agent/registry/wellknown"
)

// The catalog's agent-skills discovery index (v0.2.0): every skill whose
// SKILL.md it holds, as a skill-md artifact beside the index, so that
// `npx skills add http://ADDR` and `agent skill add http://ADDR` install
// from it. Each digest is the sha256 of the bytes served.
const (
	wellKnownIndex = "/" + wellknown.PathV2 + "/" + wellknown.IndexFile
	wellKnownSkill = "/" + wellknown.PathV2 + "/{name}/SKILL.md"
)

// published is the index as served and each skill's SKILL.md by name,
// built once per refresh of the database.
type published struct {
	gen   string
	index []byte
	files map[string][]byte
}

type wellKnownCache struct {
	mu  sync.Mutex
	pub *published
}

// publish returns the index of the database's current contents.
func (s *server) publish(ctx context.Context) (*published, error) {
	gen, err := generation(ctx, s.DB.db)
	if err != nil {
		return nil, err
	}
	s.wk.mu.Lock()
	defer s.wk.mu.Unlock()
	if p := s.wk.pub; p != nil && p.gen == gen {
		return p, nil
	}
	all, err := s.DB.All(ctx)
	if err != nil {
		return nil, err
	}
	p := &published{gen: gen, files: map[string][]byte{}}
	entries := []wellknown.Entry{}
	for _, sk := range servable(all) {
		b := []byte(sk.Manifest)
		p.files[sk.Name] = b
		entries = append(entries, wellknown.Entry{Name: sk.Name, Type: wellknown.TypeSkillMD, Description: sk.Description,
			URL: sk.Name + "/SKILL.md", Digest: wellknown.Digest(b)})
	}
	if p.index, err = wellknown.Marshal(entries); err != nil {
		return nil, err
	}
	s.wk.pub = p
	return p, nil
}

// servable are the skills the index lists: one per name (the first by
// id; an index names each skill once), with a SKILL.md, a name and a
// description the schema accepts. A skill whose folder holds more than
// its SKILL.md is served as that SKILL.md alone, as the page shows it.
func servable(all []Skill) []Skill {
	var out []Skill
	seen := map[string]bool{}
	for _, sk := range all {
		if sk.Manifest == "" || seen[sk.Name] || !wellknown.ValidName(sk.Name) || sk.Description == "" || len(sk.Description) > 1024 {
			continue
		}
		seen[sk.Name] = true
		out = append(out, sk)
	}
	return out
}

func (s *server) wellKnownIndex(w http.ResponseWriter, r *http.Request) {
	p, err := s.publish(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(p.index)
}

func (s *server) wellKnownSkill(w http.ResponseWriter, r *http.Request) {
	p, err := s.publish(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b, ok := p.files[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	_, _ = w.Write(b)
}

// inIndex reports whether sk is the skill the well-known index lists
// under its name.
func (s *server) inIndex(ctx context.Context, sk Skill) bool {
	p, err := s.publish(ctx)
	if err != nil {
		return false
	}
	b, ok := p.files[sk.Name]
	return ok && string(b) == sk.Manifest
}
