package deps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// world is a set of sources: "repo//path" -> the versions offered there,
// each with its agent.requires.
type world map[string][]struct {
	version, requires string
}

func (w world) finder(t *testing.T, calls map[string]int) Finder {
	t.Helper()
	// As the add's finder does with version tags: the highest version the
	// constraint allows, or none.
	return FinderFunc(func(_ context.Context, r manifest.Requirement) ([]Candidate, error) {
		k := r.Source + "//" + r.Path
		calls[k+"@"+r.Constraint]++
		vs, ok := w[k]
		if !ok {
			return nil, errors.New("no such source")
		}
		var best, tip *Candidate
		tagged := false
		for _, v := range vs {
			reqs, err := manifest.ParseRequires(v.requires)
			if err != nil {
				t.Fatalf("world %s: %v", k, err)
			}
			name := r.Path[strings.LastIndex(r.Path, "/")+1:]
			c := Candidate{Name: name, Version: v.version, Requires: reqs, Source: k}
			tip, tagged = &c, tagged || v.version != ""
			if _, ok := satisfiesAll(c, []want{{req: r}}); ok {
				best = &c // versions are listed lowest first
			}
		}
		switch {
		case !tagged: // no version tags: the default branch, whatever r allows
			return []Candidate{*tip}, nil
		case best == nil:
			return nil, fmt.Errorf("%w: none allowed by %s", gitsrc.ErrNoMatchingVersion, r.Constraint)
		}
		return []Candidate{*best}, nil
	})
}

type ver = struct{ version, requires string }

func root(t *testing.T, s string) []manifest.Requirement {
	t.Helper()
	r, err := manifest.ParseRequires(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolve(t *testing.T) {
	three := world{
		"o/r//skills/release-notes": {{"1.0.0", "o/r//skills/git-history@^2, o/r//skills/style-guide@^1.2"}},
		"o/r//skills/git-history":   {{"1.9.0", ""}, {"2.0.0", "o/r//skills/style-guide@>=1.3"}, {"2.4.1", "o/r//skills/style-guide@>=1.3"}, {"3.0.0", ""}},
		"o/r//skills/style-guide":   {{"1.2.0", ""}, {"1.3.5", ""}, {"1.9.0", ""}, {"2.0.0", ""}},
	}
	tests := []struct {
		name  string
		world world
		roots string
		want  map[string]string // name -> version
		by    map[string]string // name -> requirers joined with ","
		err   error
		msg   []string // parts of the error
	}{
		{name: "three skills, highest satisfying every constraint", world: three,
			roots: "o/r//skills/release-notes@*",
			want:  map[string]string{"release-notes": "1.0.0", "git-history": "2.4.1", "style-guide": "1.9.0"},
			by:    map[string]string{"release-notes": User, "git-history": "release-notes", "style-guide": "git-history,release-notes"}},
		{name: "user's own constraint counts too", world: three,
			roots: "o/r//skills/release-notes@*, o/r//skills/style-guide@~1.3",
			want:  map[string]string{"style-guide": "1.3.5"},
			by:    map[string]string{"style-guide": User + ",git-history,release-notes"}},
		{name: "conflict names both requirers", world: three,
			roots: "o/r//skills/release-notes@*, o/r//skills/git-history@^3",
			err:   ErrConflict, msg: []string{"git-history", User + " requires git-history@^3", "release-notes requires git-history@^2", "available: 2.4.1, 3.0.0"}},
		{name: "no version allowed", world: three,
			roots: "o/r//skills/git-history@^9",
			err:   gitsrc.ErrNoMatchingVersion, msg: []string{"o/r//skills/git-history@^9", "(you)", "none allowed by ^9"}},
		{name: "a lower version both allow, where neither's highest does", world: world{
			"o/r//a": {{"1.0.0", "o/r//x@<2 || >=3, o/r//b@*"}},
			"o/r//b": {{"1.0.0", "o/r//x@<3"}},
			"o/r//x": {{"1.6.0", ""}, {"2.5.0", ""}, {"3.2.0", ""}},
		}, roots: "o/r//a@*", want: map[string]string{"x": "1.6.0"}},
		{name: "cycle names the path", world: world{
			"o/r//a": {{"1.0.0", "o/r//b@^1"}},
			"o/r//b": {{"1.0.0", "o/r//c@*"}},
			"o/r//c": {{"1.0.0", "o/r//a@^1"}},
		}, roots: "o/r//a@*", err: ErrCycle, msg: []string{"a -> b -> c -> a"}},
		{name: "self requirement is a cycle", world: world{"o/r//a": {{"1.0.0", "o/r//a@*"}}},
			roots: "o/r//a@*", err: ErrCycle, msg: []string{"a -> a"}},
		{name: "a dropped requirer's constraint stops counting", world: world{
			// a@2 needs b@^2; b@2 needs nothing; b@1 would need c. The
			// first round sees no constraint on a beyond *, so a@2 and
			// b@2; c never enters.
			"o/r//a": {{"1.0.0", "o/r//b@^1"}, {"2.0.0", "o/r//b@^2"}},
			"o/r//b": {{"1.0.0", "o/r//c@*"}, {"2.0.0", ""}},
			"o/r//c": {{"1.0.0", ""}},
		}, roots: "o/r//a@*", want: map[string]string{"a": "2.0.0", "b": "2.0.0"}},
		{name: "unversioned skill only for *", world: world{"o/r//a": {{"", "o/r//b@^1"}}, "o/r//b": {{"", ""}}},
			roots: "o/r//a@*", err: ErrConflict, msg: []string{"a requires b@^1", "offers no versions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := map[string]int{}
			g, err := Resolve(context.Background(), root(t, tt.roots), tt.world.finder(t, calls))
			for k, n := range calls {
				if n != 1 {
					t.Errorf("source and constraint %s fetched %d times, want once", k, n)
				}
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Resolve = %v, %v; want %v", g, err, tt.err)
				}
				for _, m := range tt.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not say %q", err, m)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			for name, v := range tt.want {
				n, ok := g.Find(name)
				if !ok || n.Version != v {
					t.Errorf("%s = %+v (found %v), want version %s", name, n, ok, v)
				}
			}
			for name, by := range tt.by {
				n, _ := g.Find(name)
				if got := strings.Join(n.Requirers, ","); got != by {
					t.Errorf("%s requirers = %s, want %s", name, got, by)
				}
			}
			if tt.name == "a dropped requirer's constraint stops counting" {
				if _, ok := g.Find("c"); ok {
					t.Errorf("c is in the graph; only b@1 required it")
				}
			}
		})
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{name: "anything", in: []string{"*", ""}, want: "*"},
		{name: "one", in: []string{"*", "^1.2"}, want: "^1.2"},
		{name: "and", in: []string{"^1", "<1.5"}, want: "^1, <1.5"},
		{name: "alternatives multiplied out", in: []string{"<2 || >=3", "<3"}, want: "<2, <3 || >=3, <3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Join(tt.in...); got != tt.want {
				t.Errorf("Join(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzJoin: the joined constraint allows a version exactly when each of
// its parts does, for every pair of constraints that parse and every
// version without a prerelease (see Join).
func FuzzJoin(f *testing.F) {
	for _, s := range [][3]string{
		{"^1", "<1.5", "1.4.0"}, {"<2 || >=3", "<3", "1.6.0"}, {"~1.2 || ^3", ">=1.2.5 <4 || =0.1.0", "3.1.0"},
		{"*", "^2", "2.0.0"}, {">=1.0.0-rc.1", "<1.0.0", "0.9.0"}, {"1.x", "!=1.2.3", "1.2.3"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, v string) {
		ca, erra := semver.NewConstraint(a)
		cb, errb := semver.NewConstraint(b)
		ver, errv := semver.NewVersion(v)
		if erra != nil || errb != nil || errv != nil || ver.Prerelease() != "" || strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
			return
		}
		j := Join(a, b)
		cj, err := semver.NewConstraint(j)
		if err != nil {
			t.Fatalf("Join(%q, %q) = %q, which does not parse: %v", a, b, j, err)
		}
		if want := ca.Check(ver) && cb.Check(ver); cj.Check(ver) != want {
			t.Fatalf("Join(%q, %q) = %q allows %s: %v; each part: %v, %v", a, b, j, v, cj.Check(ver), ca.Check(ver), cb.Check(ver))
		}
	})
}
