package registry

import "fmt"

// FileDigests returns the sha256 (lowercase hex) of every file of an
// installed skill, keyed by slash path relative to its folder, with
// __pycache__ left out as in the folder hash. The sums come from the
// integrity record written at install, update and trust, so that serving a
// skill's manifest reads no file. A skill with no usable record (bundled,
// linked, or installed by an older agent) is hashed now.
func (s *Store) FileDigests(e Entry) (map[string]string, error) {
	rec := integrityRecords(s.Home).read(e)
	if rec == nil {
		var err error
		if _, rec, err = hashSkill(e.Path, s.now()); err != nil {
			return nil, fmt.Errorf("digest files of %s: %w", e.Canonical, err)
		}
	}
	out := make(map[string]string, len(rec.Files))
	for name, r := range rec.Files {
		out[name] = r.SHA256
	}
	return out, nil
}
