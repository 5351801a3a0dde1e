package audit

// litSet finds in one pass over a text which of a set of literals it
// holds: the prefilter of every pattern of a rule set at once, instead of
// one strings.Contains per literal per file (a few hundred passes over
// each file). Literals are bucketed by their first two bytes (one-byte
// literals by their byte), so that each position of the text costs a
// table look-up and, rarely, a comparison. The module proxy offers one
// Aho-Corasick package, young (v0.3); this is sixty lines for the few
// hundred short literals that rules give.
type litSet struct {
	lits    []string
	one     [256][]int32
	index   []uint16 // by the first two bytes: 0 for none, else bucket+1
	buckets [][]int32
}

func newLitSet(lits []string) *litSet {
	s := &litSet{lits: lits}
	for i, l := range lits {
		switch {
		case len(l) == 0:
			continue
		case len(l) == 1:
			s.one[l[0]] = append(s.one[l[0]], int32(i))
		default:
			if s.index == nil {
				s.index = make([]uint16, 1<<16)
			}
			k := uint16(l[0])<<8 | uint16(l[1])
			if s.index[k] == 0 {
				s.buckets = append(s.buckets, nil)
				s.index[k] = uint16(len(s.buckets))
			}
			b := s.index[k] - 1
			s.buckets[b] = append(s.buckets[b], int32(i))
		}
	}
	return s
}

// scan sets found[i] for every literal i that t holds.
func (s *litSet) scan(t string, found []bool) {
	for i := 0; i < len(t); i++ {
		c := t[i]
		for _, id := range s.one[c] {
			found[id] = true
		}
		if s.index == nil || i+1 >= len(t) {
			continue
		}
		b := s.index[uint16(c)<<8|uint16(t[i+1])]
		if b == 0 {
			continue
		}
		for _, id := range s.buckets[b-1] {
			l := s.lits[id]
			if !found[id] && len(t)-i >= len(l) && t[i:i+len(l)] == l {
				found[id] = true
			}
		}
	}
}

// prefilter is the literal sets of a rule set: plain literals looked for
// in the text, folded ones in the folded text.
type prefilter struct {
	plain, fold *litSet
}

// newPrefilter gives every pattern of rules the ids of its literals in
// the set it returns: plain ones first, then folded ones.
func newPrefilter(rules []*compiled) *prefilter {
	plainID, foldID := map[string]int{}, map[string]int{}
	var plain, fold []string
	for _, c := range rules {
		for _, p := range c.pats {
			for _, l := range p.lits {
				if l.fold {
					if _, ok := foldID[l.s]; !ok {
						foldID[l.s] = len(fold)
						fold = append(fold, l.s)
					}
				} else if _, ok := plainID[l.s]; !ok {
					plainID[l.s] = len(plain)
					plain = append(plain, l.s)
				}
			}
		}
	}
	pf := &prefilter{plain: newLitSet(plain), fold: newLitSet(fold)}
	for _, c := range rules {
		for i := range c.pats {
			p := &c.pats[i]
			p.ids = p.ids[:0]
			for _, l := range p.lits {
				if l.fold {
					p.ids = append(p.ids, int32(len(plain)+foldID[l.s]))
				} else {
					p.ids = append(p.ids, int32(plainID[l.s]))
				}
			}
			p.pf = pf
		}
	}
	return pf
}

// run marks which literals f holds.
func (pf *prefilter) run(f *file) {
	n := len(pf.plain.lits)
	found := make([]bool, n+len(pf.fold.lits))
	pf.plain.scan(f.text, found[:n])
	if len(pf.fold.lits) > 0 {
		pf.fold.scan(f.folded(), found[n:])
	}
	f.pf, f.found = pf, found
}
