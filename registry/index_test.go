package registry

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// fill sets every field of v (a pointer) to a distinct non-zero value, so
// that a codec that forgets a field fails the round trip.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1700000000+int64(*n), int64(*n)).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(*n))
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			v.SetBytes([]byte(fmt.Sprintf(`{"n":%d}`, *n)))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), n)
		fill(s.Index(1), n)
		v.Set(s)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	default:
		panic("fill: add a case for " + v.Kind().String())
	}
}

// TestIndexCodecCoversEntry fails when Entry (or Listing) gains a field
// the index codec does not carry: such a field would be lost on every
// fast read.
func TestIndexCodecCoversEntry(t *testing.T) {
	var want Entry
	n := 0
	fill(reflect.ValueOf(&want).Elem(), &n)
	listedOnly(want.Listing, &want)
	var e enc
	e.entry(&want)
	d := &dec{b: e.b, s: string(e.b)}
	var got Entry
	d.entry(&got)
	if d.err || d.off != len(e.b) {
		t.Fatalf("decode failed (err %v, %d of %d bytes)", d.err, d.off, len(e.b))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip lost fields:\ngot  %+v\nwant %+v", got, want)
	}
	f := false
	want.Listing.Manifest.UserInvocable = &f
	want.Tools = []Tool{}
	want.Listing.Manifest.Permissions.Env = nil
	want.InstalledAt = time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600))
	e.b = nil
	e.entry(&want)
	got = Entry{}
	(&dec{b: e.b, s: string(e.b)}).entry(&got)
	if !reflect.DeepEqual(got.Listing, want.Listing) || len(got.Tools) != 0 || got.Tools == nil || !got.InstalledAt.Equal(want.InstalledAt) {
		t.Fatalf("round trip of false/empty/zone values: got %+v", got)
	}
}

// listedOnly clears the manifest fields a listing does not record (SKILL.md
// fields no listing shows) and sets those it takes from the entry. A field
// Manifest gains is filled by fill and lost by the codec until it is
// recorded or named here.
func listedOnly(l *Listing, e *Entry) {
	m := &l.Manifest
	m.DisplayName, m.Author, m.Repository, m.License, m.Compatibility = "", "", "", "", ""
	m.CGO, m.WhenToUse, m.Paths, m.Hooks, m.Shell = false, "", nil, nil, ""
	m.DisallowedTools, m.Effort, m.Background, m.Extra = nil, "", false, nil
	m.Keys, m.KeyLines, m.Body = nil, nil, ""
	m.Name, m.Description, m.Version = e.Name, e.Description, e.Version
	m.Metadata = requiresMetadata(l.Requires)
}

func TestIndexFollowsRegistry(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	repo := gittestRepo(t, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b")})
	mustAdd(t, s, repo, func(r *AddRequest) { r.Skill = "a" }, buildPrep)
	mustAdd(t, s, repo, func(r *AddRequest) { r.Skill = "b" }, buildPrep)
	if _, err := os.Stat(s.idx.path(s.SkillsDir())); err != nil {
		t.Fatalf("no index after add: %v", err)
	}
	// registry.json is still JSON that decodes to the same entries.
	data, err := os.ReadFile(s.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	var rf registryFile
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatalf("registry.json: %v\n%s", err, data)
	}
	fromIndex, err := NewStore(s.Home).List()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalise(rf.Skills), normalise(fromIndex)) {
		t.Fatalf("index and registry.json differ:\nindex %+v\njson  %+v", fromIndex, rf.Skills)
	}

	tests := []struct {
		name   string
		change func(t *testing.T)
		check  func(t *testing.T, es []Entry, err error)
	}{
		{name: "hand edit of registry.json wins", change: func(t *testing.T) {
			edited := strings.Replace(string(data), `"trusted":true`, `"trusted":false`, 1)
			if err := os.WriteFile(s.RegistryPath(), []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, es []Entry, err error) {
			if err != nil || es[0].Trusted {
				t.Fatalf("List = %+v, %v; want a untrusted, as registry.json now says", es, err)
			}
		}},
		{name: "damaged index is ignored", change: func(t *testing.T) {
			idx, _ := os.ReadFile(s.idx.path(s.SkillsDir()))
			idx[len(idx)/2] ^= 0xff
			if err := os.WriteFile(s.idx.path(s.SkillsDir()), idx, 0o644); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, es []Entry, err error) {
			if err != nil || len(es) != 2 {
				t.Fatalf("List = %+v, %v; want both skills", es, err)
			}
		}},
		{name: "corrupt registry.json is an error despite the index", change: func(t *testing.T) {
			if err := os.WriteFile(s.RegistryPath(), []byte(`{"version": 1, "skills": [`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, check: func(t *testing.T, es []Entry, err error) {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("List = %+v, %v; want ErrCorrupt", es, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(t)
			es, err := NewStore(s.Home).List()
			tt.check(t, es, err)
		})
	}
}

// normalise drops what JSON and the index may spell differently.
func normalise(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		e.InstalledAt, e.UpdatedAt = e.InstalledAt.UTC(), e.UpdatedAt.UTC()
		out[i] = e
	}
	return out
}

func gittestRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	return gittest.NewRepo(t, files).FileURL()
}

func crc32Of(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli))
}

func FuzzDecodeIndex(f *testing.F) {
	var e enc
	x := Entry{Name: "a", Canonical: "a", Tools: []Tool{{Name: "t"}}, Listing: &Listing{Runnable: []string{"scripts/x.py"}},
		Integrity: Integrity{TrustedHashes: []string{h1a}}}
	e.entry(&x)
	recs := []indexed{{rec: e.b, line: []byte(`{"name":"a"}`)}}
	st := stamp{1, 2, 3, 4, 5}
	s := &Store{Home: f.TempDir()}
	_ = os.MkdirAll(s.SkillsDir(), 0o755)
	if err := s.idx.write(s.SkillsDir(), st, recs); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(s.idx.path(s.SkillsDir()))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, lines, ok := decodeIndex(data, st)
		if ok && len(es) != len(lines) && len(es) > 0 {
			// Two records may share a canonical name only in a forged
			// index; decoding must still not panic.
			return
		}
		// Fix both CRCs so that the fuzzer reaches the record and line
		// decoders.
		if len(data) >= len(indexMagic)+4 {
			fixed := append([]byte(nil), data...)
			copy(fixed, indexMagic)
			if end, ok := headEnd(fixed, st); ok && end >= len(indexMagic)+4 && end+4 <= len(fixed) {
				copy(fixed[end-4:end], crc32Of(fixed[:end-4]))
				copy(fixed[len(fixed)-4:], crc32Of(fixed[end:len(fixed)-4]))
			}
			decodeIndex(fixed, st)
		}
	})
}

// TestWriterReadsLinesSection: readers read only the records section; a
// writer then reads the lines from the index, or, when that section is
// damaged, marshals every entry again. registry.json is right either way.
func TestWriterReadsLinesSection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage bool
	}{
		{name: "intact lines are reused"},
		{name: "damaged lines are rebuilt", damage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			repo := gittestRepo(t, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b")})
			mustAdd(t, s, repo, func(r *AddRequest) { r.Skill = "a" }, buildPrep)
			if tt.damage {
				idx, err := os.ReadFile(s.idx.path(s.SkillsDir()))
				if err != nil {
					t.Fatal(err)
				}
				idx[len(idx)-1] ^= 0xff // the lines section's CRC
				if err := os.WriteFile(s.idx.path(s.SkillsDir()), idx, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A fresh store, as a new process: it reads the records only.
			s2 := NewStore(s.Home)
			if es, err := s2.List(); err != nil || len(es) != 1 {
				t.Fatalf("List = %+v, %v", es, err)
			}
			mustAdd(t, s2, repo, func(r *AddRequest) { r.Skill = "b" }, buildPrep)
			data, err := os.ReadFile(s.RegistryPath())
			if err != nil {
				t.Fatal(err)
			}
			var rf registryFile
			if err := json.Unmarshal(data, &rf); err != nil || len(rf.Skills) != 2 || rf.Skills[0].Canonical != "a" {
				t.Fatalf("registry.json after the second add: %v\n%s", err, data)
			}
			fromIndex, err := NewStore(s.Home).List()
			if err != nil || !reflect.DeepEqual(normalise(rf.Skills), normalise(fromIndex)) {
				t.Fatalf("index and registry.json differ (%v):\nindex %+v\njson  %+v", err, fromIndex, rf.Skills)
			}
		})
	}
}
