package base

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestApplyPatchCorpus applies each testdata/patches/*.txtar: the files
// under before/ are the workspace, patch is the patch, and either after/
// is the whole workspace afterwards or error is the code and the
// workspace is unchanged. Files named crlf* use CRLF line endings.
func TestApplyPatchCorpus(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob("testdata/patches/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no patch cases: %v", err)
	}
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			crlf := strings.HasPrefix(name, "crlf")
			before, after := map[string]string{}, map[string]string{}
			var patch, wantCode string
			for _, f := range ar.Files {
				data := string(f.Data)
				if crlf {
					data = strings.ReplaceAll(data, "\n", "\r\n")
				}
				switch {
				case f.Name == "patch":
					patch = string(f.Data)
				case f.Name == "error":
					wantCode = strings.TrimSpace(string(f.Data))
				case strings.HasPrefix(f.Name, "before/"):
					before[strings.TrimPrefix(f.Name, "before/")] = data
				case strings.HasPrefix(f.Name, "after/"):
					after[strings.TrimPrefix(f.Name, "after/")] = data
				default:
					t.Fatalf("unknown section %s", f.Name)
				}
			}
			w := newTestWS(t, before)
			msg, code := w.call("apply_patch", map[string]any{"patch": patch}, nil)
			if code != wantCode {
				t.Fatalf("code %q (%s), want %q", code, msg, wantCode)
			}
			want := after
			if wantCode != "" {
				want = before
				if !strings.Contains(msg, "othing was changed") && code != CodePathOutside {
					t.Errorf("a failed patch's message should say nothing changed: %s", msg)
				}
			}
			if got := snapshot(t, w.dir); !equalMaps(got, want) {
				t.Errorf("workspace after the patch:\n%v\nwant:\n%v", got, want)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(w.dir), "outside.txt")); err == nil {
				t.Error("a file was written outside the workspace")
			}
		})
	}
}

// snapshot reads every regular file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestParsePatch(t *testing.T) {
	t.Parallel()
	ops, err := ParsePatch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ func x\n-1\n+2\n@@\n 3\n*** End of File\n*** Add File: c\n+c\n*** Delete File: d\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].MoveTo != "b" || len(ops[0].Chunks) != 2 || ops[0].Chunks[0].Anchor != "func x" ||
		!ops[0].Chunks[1].EOF || ops[1].Content != "c\n" || ops[2].Kind != OpDelete {
		t.Fatalf("parsed %+v", ops)
	}
	for name, bad := range map[string]string{
		"no begin":       "*** Update File: a\n@@\n-a\n*** End Patch",
		"no end":         "*** Begin Patch\n*** Delete File: a\n",
		"empty":          "*** Begin Patch\n*** End Patch",
		"no path":        "*** Begin Patch\n*** Delete File: \n*** End Patch",
		"bad header":     "*** Begin Patch\n*** Rename File: a\n*** End Patch",
		"add without +":  "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
		"update no hunk": "*** Begin Patch\n*** Update File: a\n*** End Patch",
		"eof first":      "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch",
	} {
		if _, err := ParsePatch(bad); codeOf(err) != CodeInvalidArgs {
			t.Errorf("%s: err %v, want invalid_args", name, err)
		}
	}
}

// A patch whose write fails half way leaves the files as they were: the
// added file's path is an existing folder, which only the write finds out,
// after a.txt was written.
func TestApplyPatchRollsBackFailedWrite(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"a.txt": "a\n", "z/keep": "k"})
	_, code := w.call("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: z\n+new\n*** End Patch"}, nil)
	if code == "" {
		t.Fatal("the patch replaced a folder with a file")
	}
	if got := w.read("a.txt"); got != "a\n" {
		t.Errorf("a.txt = %q, want it restored", got)
	}
}
