package disclosure

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var testTools = []Tool{
	{Name: "use_skill", Description: "Load a skill's instructions."},
	{Name: "script_run", Description: "Run a script."},
}

func TestLayer1(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 500)
	skills := []Skill{
		{Name: "alpha", Description: "Does alpha things.\nOn two lines."},
		{Name: "big", Description: long},
		{Name: "hidden", Description: "Only for people.", DisableModelInvocation: true},
		{Name: "zeta", Description: "Does zeta."},
	}
	tests := []struct {
		name         string
		budget       int
		tools        []Tool
		wantIncluded []string
		wantDropped  []string
	}{
		{"everything fits", DefaultBudget, testTools, []string{"alpha", "big", "zeta"}, nil},
		{"big dropped, later small kept", 600, testTools[:1], []string{"alpha", "zeta"}, []string{"big"}},
		{"nothing fits", 10, testTools[:1], nil, []string{"alpha", "big", "zeta"}},
		{"no tools", DefaultBudget, nil, []string{"alpha", "big", "zeta"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text, inc, drop := Layer1(skills, tt.tools, tt.budget)
			if !slices.Equal(inc, tt.wantIncluded) || !slices.Equal(drop, tt.wantDropped) {
				t.Fatalf("included %v dropped %v, want %v %v", inc, drop, tt.wantIncluded, tt.wantDropped)
			}
			if strings.Contains(text, "hidden") || strings.Contains(text, "Only for people") {
				t.Errorf("disable-model-invocation skill is in Layer 1:\n%s", text)
			}
			if len(inc) > 0 && utf8.RuneCountInString(text) > tt.budget {
				t.Errorf("text is %d characters, over the budget %d", utf8.RuneCountInString(text), tt.budget)
			}
			for _, tool := range tt.tools {
				if !strings.Contains(text, "- "+tool.Name+": ") {
					t.Errorf("tool %s missing from:\n%s", tool.Name, text)
				}
			}
			for _, s := range inc {
				if !strings.Contains(text, "- "+s+": ") {
					t.Errorf("skill %s missing from:\n%s", s, text)
				}
			}
			if slices.Contains(inc, "alpha") && !strings.Contains(text, "- alpha: Does alpha things. On two lines.\n") {
				t.Errorf("description not folded onto one line:\n%s", text)
			}
		})
	}
}

func TestBudgetFor(t *testing.T) {
	t.Parallel()
	for window, want := range map[int]int{0: 16000, -1: 16000, 200000: 16000, 1000000: 80000, 8192: 652} {
		if got := BudgetFor(window); got != want {
			t.Errorf("BudgetFor(%d) = %d, want %d", window, got, want)
		}
	}
}

func TestTriggerMatrix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		triggers Triggers
		person   error
		model    error
	}{
		{"default", Triggers{UserInvocable: true}, nil, nil},
		{"disable-model-invocation", Triggers{DisableModelInvocation: true, UserInvocable: true}, nil, ErrModelInvocationDisabled},
		{"user-invocable false", Triggers{UserInvocable: false}, ErrNotUserInvocable, nil},
		{"both", Triggers{DisableModelInvocation: true}, ErrNotUserInvocable, ErrModelInvocationDisabled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for by, want := range map[Invoker]error{Person: tt.person, Model: tt.model} {
				err := Check("demo", tt.triggers, by)
				if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
					t.Errorf("Check by %v = %v, want %v", by, err, want)
				}
			}
		})
	}
}

// FuzzCollapseSpace checks the copy-free path of collapseSpace against
// the definition it shortcuts.
func FuzzCollapseSpace(f *testing.F) {
	for _, s := range []string{"", " ", "a b", " a", "a ", "a  b", "a\tb", "a\u00a0b", "Sum two numbers.", "x\n  y", "\xff a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzCollapsedRunes checks the bounded count Layer1 sizes lines with
// against the definition: the rune count of the collapsed text, and
// whether it is within limit.
func FuzzCollapsedRunes(f *testing.F) {
	for _, s := range []string{"", " ", "a b", " a ", "a  b", "a\tb\n", "a\u00a0b", "\u3000x\u3000", "\xff a", "héllo wörld"} {
		f.Add(s, 3)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		want := utf8.RuneCountInString(strings.Join(strings.Fields(s), " "))
		n, fits := collapsedRunes(s, limit)
		if fits != (want <= limit) || fits && n != want {
			t.Fatalf("collapsedRunes(%q, %d) = %d, %v; the text has %d runes", s, limit, n, fits, want)
		}
	})
}

// TestLayer1AtEveryBudget compares Layer1 with its plain definition (every
// line sized in full) at every budget up to past the whole text, so that
// a line that fits exactly, or misses by one rune, is placed as the
// definition says.
func TestLayer1AtEveryBudget(t *testing.T) {
	t.Parallel()
	skills := []Skill{
		{Name: "alpha", Description: "Does alpha things.\nOn two lines."},
		{Name: "wide", Description: "  Ünïcödé  \u3000 spaced\tout  "},
		{Name: "hidden", Description: "Only for people.", DisableModelInvocation: true},
		{Name: "empty", Description: ""},
		{Name: "long", Description: strings.Repeat("word ", 40)},
		{Name: "z", Description: "Z."},
	}
	define := func(budget int) (string, []string, []string) {
		var b strings.Builder
		b.WriteString("## Tools\n" + line(testTools[0].Name, testTools[0].Description))
		header := "\n## Skills\n" + layer1Intro
		size := utf8.RuneCountInString(b.String())
		var lines, inc, drop []string
		for _, s := range skills {
			if s.DisableModelInvocation {
				continue
			}
			l := line(s.Name, s.Description)
			n := utf8.RuneCountInString(l)
			if len(lines) == 0 {
				n += utf8.RuneCountInString(header)
			}
			if size+n > budget {
				drop = append(drop, s.Name)
				continue
			}
			size += n
			lines, inc = append(lines, l), append(inc, s.Name)
		}
		if len(lines) > 0 {
			b.WriteString(header + strings.Join(lines, ""))
		}
		return b.String(), inc, drop
	}
	full, _, _ := define(1 << 20)
	for budget := 0; budget <= utf8.RuneCountInString(full)+1; budget++ {
		text, inc, drop := Layer1(skills, testTools[:1], budget)
		wantText, wantInc, wantDrop := define(budget)
		if text != wantText || !slices.Equal(inc, wantInc) || !slices.Equal(drop, wantDrop) {
			t.Fatalf("budget %d: got %v %v\n%s\nwant %v %v\n%s", budget, inc, drop, text, wantInc, wantDrop, wantText)
		}
	}
}
