package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
)

// writeBigSkill writes a skill of 100 files shaped like the public ones:
// SKILL.md, 49 markdown references with prose, tables, links and fenced
// commands, 30 Python scripts and 20 shell scripts, about 4 KB each.
func writeBigSkill(tb testing.TB, dir string) {
	tb.Helper()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("SKILL.md", "---\nname: big\ndescription: A large skill for the audit benchmark.\npermissions:\n  network: [\"api.example.org:443\"]\n---\n# Big\n\nRead references/ as needed.\n")
	var md strings.Builder
	for i := range 40 {
		fmt.Fprintf(&md, "## Section %d\n\nThe tool reads the table below and writes a report; see https://docs.example.org/section/%d for the fields — it’s “quoted” text.\n\n| field | meaning |\n|---|---|\n| id | the record’s id |\n\n```bash\npython scripts/run_%d.py --input data.csv --out /tmp/out.json\n```\n\n", i, i, i)
	}
	for i := range 49 {
		write(fmt.Sprintf("references/ref_%02d.md", i), md.String()[:4096])
	}
	var py strings.Builder
	py.WriteString("# /// script\n# dependencies = [\"requests\"]\n# ///\nimport json, os, sys\nimport requests\n\n")
	for i := range 60 {
		fmt.Fprintf(&py, "def step_%d(data):\n    r = requests.get(\"https://api.example.org/v1/items/%d\", timeout=10)\n    return json.loads(r.text)\n\n", i, i)
	}
	for i := range 30 {
		write(fmt.Sprintf("scripts/run_%02d.py", i), py.String()[:4096])
	}
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\nset -eu\n")
	for i := range 120 {
		fmt.Fprintf(&sh, "echo \"step %d\" && ls -la \"$TMPDIR\" > /dev/null\n", i)
	}
	for i := range 20 {
		write(fmt.Sprintf("scripts/tool_%02d.sh", i), sh.String()[:4096])
	}
}

// BenchmarkAudit audits a 100-file skill with the built-in rules (goal:
// 50 ms or less; docs/benchmarks.md).
func BenchmarkAudit(b *testing.B) {
	dir := b.TempDir()
	writeBigSkill(b, dir)
	rs, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	m, _, err := gitsrc.LoadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	fsys := os.DirFS(dir)
	b.ResetTimer()
	for b.Loop() {
		r, err := rs.Audit(fsys, m)
		if err != nil {
			b.Fatal(err)
		}
		if r.Files != 100 {
			b.Fatalf("read %d files, want 100", r.Files)
		}
	}
}

// BenchmarkAuditExample audits the example skill
// (examples/skills/hello-extended) from disk: the audit that add runs.
func BenchmarkAuditExample(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "examples", "skills", "hello-extended")
	rs, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	m, _, err := gitsrc.LoadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	fsys := os.DirFS(dir)
	for b.Loop() {
		if _, err := rs.Audit(fsys, m); err != nil {
			b.Fatal(err)
		}
	}
}
