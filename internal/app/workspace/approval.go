package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/jsontext"
)

// approvalArgs is the form of a call's arguments that the user approves
// and that then runs, byte for byte (SPEC §12): one key each (JSON with a
// key twice shows one value and runs the other), keys sorted, numbers as
// written, and every control or format character (ESC, DEL, C1 codes,
// bidi overrides, zero-width marks) escaped as \uXXXX, which decodes to
// the same value, so a terminal shows what a command holds instead of
// obeying it.
func approvalArgs(args []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON value")
	}
	b, err := jsontext.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []byte(EscapeControls(string(b))), nil
}

// EscapeControls escapes the runes of s that a terminal would act on or
// hide as \uXXXX. In approvalArgs, encoding/json has escaped those below
// U+0020 already and every other one is inside a JSON string, where
// \uXXXX means the same rune.
func EscapeControls(s string) string {
	i := strings.IndexFunc(s, hidden)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if !hidden(r) {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

func hidden(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// EscapeTerminal is what a person's terminal is given of text a skill
// supplied (a name, a description, a SKILL.md body, an error quoting
// them): every rune that EscapeControls escapes, and each byte that is not
// UTF-8 (a lone 0x9b is CSI to some terminals), is escaped as \uXXXX or
// \xNN, except tabs and line breaks, which only lay the text out. Clear
// screen (ESC [2J), an OSC 52 clipboard write and a carriage return that
// overprints a line are shown, not obeyed. --json output does not use it:
// JSON has its own escapes and is for programs.
func EscapeTerminal(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiHidden(c) {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || hidden(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiHidden(c) {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case !hidden(r):
			b.WriteString(s[i : i+size])
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// asciiHidden reports the ASCII controls EscapeTerminal escapes: all of
// C0 and DEL but tab and line feed.
func asciiHidden(c byte) bool { return (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' }
