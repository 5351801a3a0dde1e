package cli

import "strings"

// describe turns an error from a library package into the words a user sees:
// what happened, then what to do next. Library errors carry the operation;
// the advice lives here so that wording is decided in one place.
func describe(err error) string {
	msg := err.Error()
	for _, h := range hints {
		if h.match(err) && !strings.Contains(msg, h.advice) {
			return msg + "\n  " + h.advice
		}
	}
	return msg
}

type hint struct {
	match  func(error) bool
	advice string
}

// hints is filled in by the files that own the errors (see init functions).
var hints []hint

// isCobraUsage recognises cobra's own argument errors, which are not typed.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
