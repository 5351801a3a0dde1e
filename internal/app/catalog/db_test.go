package catalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func skillsNamed(prefix string, n int) []Skill {
	out := make([]Skill, n)
	for i := range out {
		name := fmt.Sprintf("%s-%d", prefix, i)
		out[i] = Skill{ID: "file:///repo#" + name, Name: name, Description: "Skill " + name + ".", Source: "file:///repo", Path: name, Kind: KindGit, Manifest: "---\nname: " + name + "\n---\n"}
	}
	return out
}

func TestSearchRanksNameAboveDescription(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	skills := []Skill{
		{ID: "a", Name: "report-writer", Description: "Writes reports, and reads a PDF for them."},
		{ID: "b", Name: "pdf", Description: "Fill and split PDF forms."},
		{ID: "c", Name: "pdf-tools", Description: "Tools."},
		{ID: "d", Name: "weather", Description: "Forecasts."},
	}
	if err := d.Replace(ctx, skills, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"exact name first, then in name, then description", "pdf", []string{"b", "c", "a"}},
		{"prefix", "weath", []string{"d"}},
		{"no match", "kubernetes", nil},
		{"empty lists all by name", "", []string{"b", "c", "a", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Search(ctx, tt.query, 20)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range got {
				ids = append(ids, s.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, ids, tt.want)
			}
		})
	}
}

// TestKilledRefreshKeepsLastIndex kills (SIGKILL) a real process in the
// middle of replacing the index: the database opens afterwards and holds
// the last complete index.
func TestKilledRefreshKeepsLastIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Replace(ctx, skillsNamed("old", 10), time.Now()); err != nil {
		t.Fatal(err)
	}
	d.Close()

	marker := filepath.Join(dir, "halfway")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRefreshUntilKilled$")
	cmd.Env = append(os.Environ(), "CATALOG_HELPER_DB="+path, "CATALOG_HELPER_MARKER="+marker)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the refreshing process never got halfway")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	d, err = Open(path)
	if err != nil {
		t.Fatalf("the database does not open after the kill: %v", err)
	}
	defer d.Close()
	_, n, err := d.Refreshed(ctx)
	if err != nil || n != 10 {
		t.Fatalf("Refreshed = %d, %v; want the last complete index of 10", n, err)
	}
	got, err := d.Search(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Name != "old-0" {
		t.Fatalf("after the kill the index holds %d skills (first %+v); want the 10 old ones", len(got), got)
	}
	if hits, _ := d.Search(ctx, "new", 10); len(hits) != 0 {
		t.Fatalf("the killed refresh's skills are served: %v", hits)
	}
}

// TestHelperRefreshUntilKilled is the process TestKilledRefreshKeepsLastIndex
// kills: it replaces the index with 200 skills and stops halfway, inside
// the transaction, until it is killed.
func TestHelperRefreshUntilKilled(t *testing.T) {
	path := os.Getenv("CATALOG_HELPER_DB")
	if path == "" {
		t.Skip("run by TestKilledRefreshKeepsLastIndex")
	}
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	afterInsert = func(i int) {
		if i == 100 {
			if err := os.WriteFile(os.Getenv("CATALOG_HELPER_MARKER"), nil, 0o644); err != nil {
				t.Error(err)
			}
			time.Sleep(time.Hour)
		}
	}
	_ = d.Replace(context.Background(), skillsNamed("new", 200), time.Now())
	t.Fatal("the refresh was not killed")
}

// TestSearchAfterReplace: a search sees the index a later Replace wrote,
// even one at the same second with as many skills (the memo of names is
// keyed by the generation, not the time).
func TestSearchAfterReplace(t *testing.T) {
	d, err := Open(t.TempDir() + "/catalog.db")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	at := time.Unix(1700000000, 0)
	for _, name := range []string{"pdf-old", "pdf-new"} {
		if err := d.Replace(ctx, []Skill{{ID: "x#" + name, Name: name, Description: "Stamps pages."}}, at); err != nil {
			t.Fatal(err)
		}
		got, err := d.Search(ctx, "pdf", 5)
		if err != nil || len(got) != 1 || got[0].Name != name {
			t.Fatalf("after the index of %s: %+v, %v", name, got, err)
		}
	}
	// A second DB on the same file (another process) sees it too.
	other, err := Open(d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Search(ctx, "pdf", 5); err != nil {
		t.Fatal(err)
	}
	if err := d.Replace(ctx, []Skill{{ID: "x#forms", Name: "forms", Description: "About pdf."}, {ID: "x#pdf", Name: "pdf", Description: "PDF."}}, at); err != nil {
		t.Fatal(err)
	}
	got, err := other.Search(ctx, "pdf", 5)
	if err != nil || len(got) != 2 || got[0].Name != "pdf" || got[1].Name != "forms" {
		t.Fatalf("another process's search after a replace: %+v, %v", got, err)
	}
}
