package bundled

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

func TestEntries(t *testing.T) {
	t.Parallel()
	entries := Entries()
	if len(entries) == 0 {
		t.Fatal("no bundled skills")
	}
	found := false
	for _, e := range entries {
		if e.Source != registry.SourceBundled || !e.Trusted || e.Description == "" || e.Path != "" {
			t.Errorf("entry %+v: want Source bundled, Trusted, a description and no path", e)
		}
		if e.Canonical == "skill-authoring" {
			found = true
		}
	}
	if !found {
		t.Fatal("skill-authoring is not bundled")
	}
}

func TestSkillAuthoringManifest(t *testing.T) {
	t.Parallel()
	m, err := Manifest("skill-authoring")
	if err != nil {
		t.Fatal(err)
	}
	// The guide must cover what the issue asks for.
	for _, want := range []string{
		"description", "canonical", "--help", "--json", "stderr", "UTF-8", "exit 0", "PEP 723",
		"sdk.NewTool", "sdk.NewSkill", "sdk.Serve", `description:"`, "agent skill validate", "$ARGUMENTS",
	} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("skill-authoring body does not mention %q", want)
		}
	}
	if _, err := Manifest("nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Manifest(nope) = %v, want ErrNotFound", err)
	}
}

// TestSkillAuthoringValidates runs the bundled SKILL.md through the same
// parser as `agent skill validate` and wants no warnings either.
func TestSkillAuthoringValidates(t *testing.T) {
	t.Parallel()
	data, err := files.ReadFile("skills/skill-authoring/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, warns, err := manifest.ParseManifest("SKILL.md", data)
	if err != nil || len(warns) > 0 {
		t.Fatalf("validate: err %v, warnings %v", err, warns)
	}
}
