package disclosure

import (
	"fmt"
	"testing"
)

// BenchmarkLayer1Of1000 lays out Layer 1 for 1,000 skills at the default
// budget, where about 120 fit and the rest are dropped.
func BenchmarkLayer1Of1000(b *testing.B) {
	skills := make([]Skill, 1000)
	for i := range skills {
		skills[i] = Skill{Name: fmt.Sprintf("skill-%04d", i), Description: "Converts CSV and Excel files into charts and summary tables. Use when the user shares tabular data and wants a plot."}
	}
	for b.Loop() {
		Layer1(skills, testTools, DefaultBudget)
	}
}
