package skilltest

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML shape CI tools read (the Ant/Surefire schema): one suite
// per skill, one test case per case or check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML.
func WriteJUnit(w io.Writer, r Report) error {
	s := junitSuite{Name: r.Skill, Tests: len(r.Results), Failures: r.Failed(), Skipped: r.Skipped()}
	var total float64
	for _, x := range r.Results {
		secs := x.Duration.Seconds()
		total += secs
		c := junitCase{Name: x.Name, Classname: r.Skill + "." + x.Kind, File: x.File, Line: x.Line, Time: fmt.Sprintf("%.3f", secs)}
		if x.Skipped != "" {
			c.Skipped = &junitSkipped{Message: sanitizeXML(x.Skipped)}
		}
		if !x.Passed() {
			c.Failure = &junitFailure{Message: x.Failures[0], Type: x.Kind, Text: strings.Join(x.Failures, "\n")}
		}
		var out []string
		if len(x.Denials) > 0 {
			out = append(out, "sandbox denials:\n  "+strings.Join(x.Denials, "\n  "))
		}
		if x.Output != "" {
			out = append(out, x.Output)
		}
		c.SystemOut = sanitizeXML(strings.Join(out, "\n"))
		if c.Failure != nil {
			c.Failure.Message, c.Failure.Text = sanitizeXML(c.Failure.Message), sanitizeXML(c.Failure.Text)
		}
		c.Name = sanitizeXML(c.Name)
		s.Cases = append(s.Cases, c)
	}
	s.Time = fmt.Sprintf("%.3f", total)
	doc := junitSuites{Tests: s.Tests, Failures: s.Failures, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// sanitizeXML drops the characters XML 1.0 cannot carry at all (a
// tool's output may hold any byte): encoding/xml escapes markup, not
// these.
func sanitizeXML(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t', r == '\n', r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}
