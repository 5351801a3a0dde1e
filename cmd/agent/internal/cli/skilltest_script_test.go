package cli_test

import (
	"encoding/xml"
	"os"
	"slices"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// junitDoc is the JUnit XML shape CI tools read, for cmdJUnit.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// cmdJUnit parses a JUnit report with encoding/xml and checks its counts
// and which cases failed: junit FILE TESTS FAILURES [FAILED-CASE...].
func cmdJUnit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: junit FILE TESTS FAILURES [FAILED-CASE...]")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		ts.Fatalf("%s is not XML: %v", args[0], err)
	}
	tests, _ := strconv.Atoi(args[1])
	failures, _ := strconv.Atoi(args[2])
	if doc.Tests != tests || doc.Failures != failures || len(doc.Suites) != 1 {
		ts.Fatalf("%s: %d tests, %d failures in %d suites; want %d, %d in 1", args[0], doc.Tests, doc.Failures, len(doc.Suites), tests, failures)
	}
	var failed []string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failed = append(failed, c.Name)
		}
	}
	want := args[3:]
	slices.Sort(failed)
	slices.Sort(want)
	if !slices.Equal(failed, want) {
		ts.Fatalf("%s: failed cases %q, want %q", args[0], failed, want)
	}
}
