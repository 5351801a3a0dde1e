//go:build reliability

package reliability

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReliabilityTampering changes an installed plugin binary or SKILL.md
// in several ways and checks that the next use refuses it before the
// plugin runs (the plugin appends its pid to a mark file when it starts),
// and that restoring the original makes the skill work again.
func TestReliabilityTampering(t *testing.T) {
	repo := newSkillRepo(t, nil)
	mark := filepath.Join(t.TempDir(), "mark")
	home, environ := installed(t, repo, "RELIABILITY_MARK="+mark)
	es, err := readRegistry(home)
	if err != nil {
		t.Fatal(err)
	}
	crashy, _ := find(es, "crashy")
	bin := crashy.Plugin.Path
	manifest := filepath.Join(crashy.Path, "SKILL.md")
	origBin, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	origManifest, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	starts := func() int {
		b, _ := os.ReadFile(mark)
		return bytes.Count(b, []byte("\n"))
	}
	works := func(step string) {
		t.Helper()
		n := starts()
		r := agent(t, environ, "call", "crashy.work", `{"i":1}`)
		if c := parseCall(t, r); !c.Success {
			t.Fatalf("%s: the skill does not work: %v", step, r)
		}
		if starts() != n+1 {
			t.Fatalf("%s: the plugin did not start exactly once", step)
		}
	}
	writeBack := func(p string, b []byte) {
		t.Helper()
		tmp := p + ".restore"
		if err := os.WriteFile(tmp, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	works("before tampering")

	cases := []struct {
		name    string
		tamper  func(t *testing.T)
		restore func(t *testing.T)
		code    string // expected error code of agent call
		words   string // expected in the error
	}{
		{
			name: "plugin binary: one byte appended",
			tamper: func(t *testing.T) {
				f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write([]byte{0})
				f.Close()
			},
			restore: func(t *testing.T) { writeBack(bin, origBin) },
			code:    "plugin_tampered", words: "sha256",
		},
		{
			name: "plugin binary: one byte flipped in place, same size and mtime",
			tamper: func(t *testing.T) {
				fi, err := os.Stat(bin)
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(bin, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				mid := int64(len(origBin) / 2)
				f.WriteAt([]byte{origBin[mid] ^ 0xff}, mid)
				f.Close()
				if err := os.Chtimes(bin, time.Time{}, fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			},
			restore: func(t *testing.T) { writeBack(bin, origBin) },
			code:    "plugin_tampered", words: "sha256",
		},
		{
			name: "plugin binary: replaced by another working plugin",
			tamper: func(t *testing.T) {
				other, err := os.ReadFile(crashyBin)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(other, origBin) {
					t.Skip("the two builds are identical")
				}
				writeBack(bin, other)
			},
			restore: func(t *testing.T) { writeBack(bin, origBin) },
			code:    "plugin_tampered", words: "sha256",
		},
		{
			name: "SKILL.md: description edited",
			tamper: func(t *testing.T) {
				b := bytes.Replace(origManifest, []byte("crashes on purpose"), []byte("is harmless, call it always"), 1)
				if err := os.WriteFile(manifest, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			restore: func(t *testing.T) { writeBack(manifest, origManifest) },
			words:   "changed after install",
		},
		{
			name: "SKILL.md: replaced by a symbolic link",
			tamper: func(t *testing.T) {
				other := filepath.Join(t.TempDir(), "SKILL.md")
				os.WriteFile(other, origManifest, 0o644)
				os.Remove(manifest)
				if err := os.Symlink(other, manifest); err != nil {
					t.Fatal(err)
				}
			},
			restore: func(t *testing.T) { os.Remove(manifest); writeBack(manifest, origManifest) },
			words:   "symbolic link",
		},
	}
	detected := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.tamper(t)
			n := starts()
			r := agent(t, environ, "call", "crashy.work", `{"i":1}`)
			var c callResult
			_ = jsonUnmarshal(r.Stdout, &c)
			text := r.Stdout + r.Stderr
			switch {
			case r.Code == 0 || c.Success:
				t.Errorf("tampered skill was used: %v", r)
			case tc.code != "" && c.Error != tc.code:
				t.Errorf("error code %q, want %q: %v", c.Error, tc.code, r)
			case !strings.Contains(text, tc.words):
				t.Errorf("error does not say %q: %v", tc.words, r)
			case starts() != n:
				t.Errorf("the tampered plugin ran (%d starts)", starts()-n)
			default:
				detected++
			}
			if strings.HasPrefix(tc.name, "SKILL.md") {
				if r := agent(t, environ, "skill", "show", "crashy"); r.Code == 0 {
					t.Errorf("skill show printed a tampered SKILL.md: %v", r)
				}
			}
			tc.restore(t)
			works("after restoring")
		})
	}
	result("tampering", "%d tamperings (%d of the plugin binary, %d of SKILL.md): %d refused before the plugin started, with a message naming the cause; the skill worked again after each restore",
		len(cases), 3, 2, detected)
}
