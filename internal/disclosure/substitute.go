package disclosure

import "strings"

// Substitute fills the placeholders of a SKILL.md body with the arguments a
// skill was invoked with (Layer 2). The rules follow Claude Code skills:
//
//   - $ARGUMENTS is every argument joined by single spaces.
//   - $ARGUMENTS[N] is argument N, counting from 0.
//   - $N is the same as $ARGUMENTS[N]. N takes every digit that follows, so
//     $10 is argument 10; write $ARGUMENTS[1]0 for argument 1 then a "0".
//   - An argument that was not given is the empty string.
//   - A dollar amount is left alone: $N is not a placeholder when its
//     digits are followed by '.' or ',' and another digit ("$5.00",
//     "$1,000"). Any other "$5" is a placeholder.
//   - A backslash before a placeholder makes it literal and is removed:
//     \$ARGUMENTS, \$ARGUMENTS[0] and \$1 come out as written without the
//     backslash. Other backslashes and dollars are untouched (shell
//     variables such as $HOME stay as they are).
//   - If the body has no placeholder at all and arguments were given, a
//     line "ARGUMENTS: <args joined by spaces>" is appended so the model
//     still sees them.
func Substitute(body string, args []string) string {
	out, found := expand(body, args)
	if !found && len(args) > 0 {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += "\nARGUMENTS: " + strings.Join(args, " ") + "\n"
	}
	return out
}

// HasPlaceholder reports whether body contains a placeholder that Substitute
// would replace.
func HasPlaceholder(body string) bool {
	_, found := expand(body, nil)
	return found
}

const argumentsWord = "ARGUMENTS"

func expand(body string, args []string) (string, bool) {
	if !strings.Contains(body, "$") {
		return body, false
	}
	arg := func(i int) string {
		if i >= 0 && i < len(args) {
			return args[i]
		}
		return ""
	}
	var b strings.Builder
	b.Grow(len(body))
	found := false
	for i := 0; i < len(body); {
		c := body[i]
		escaped := c == '\\' && i+1 < len(body) && body[i+1] == '$'
		if c != '$' && !escaped {
			b.WriteByte(c)
			i++
			continue
		}
		d := i // the dollar
		if escaped {
			d = i + 1
		}
		n, idx, ok := placeholder(body, d)
		switch {
		case !ok:
			b.WriteString(body[i : d+1])
			i = d + 1
		case escaped:
			b.WriteString(body[d : d+n])
			i = d + n
		default:
			found = true
			if idx < 0 {
				b.WriteString(strings.Join(args, " "))
			} else {
				b.WriteString(arg(idx))
			}
			i = d + n
		}
	}
	return b.String(), found
}

// placeholder reports whether a placeholder starts at the '$' at s[i]: its
// length, and the argument index (-1 for all of $ARGUMENTS).
func placeholder(s string, i int) (n, idx int, ok bool) {
	rest := s[i+1:]
	if strings.HasPrefix(rest, argumentsWord) {
		after := rest[len(argumentsWord):]
		if len(after) > 0 && after[0] == '[' {
			if k, v := digits(after[1:]); k > 0 && k < len(after)-1 && after[1+k] == ']' {
				return 1 + len(argumentsWord) + 2 + k, v, true
			}
		}
		// $ARGUMENTSX is not $ARGUMENTS followed by X when X continues a
		// word, for example $ARGUMENTS_FILE.
		if len(after) > 0 && isWordByte(after[0]) {
			return 0, 0, false
		}
		return 1 + len(argumentsWord), -1, true
	}
	k, v := digits(rest)
	if k == 0 {
		return 0, 0, false
	}
	// A dollar amount: $5.00, $1,000.
	if k+1 < len(rest) && (rest[k] == '.' || rest[k] == ',') && isDigit(rest[k+1]) {
		return 0, 0, false
	}
	return 1 + k, v, true
}

// digits parses the leading decimal digits of s. Indexes too large to be an
// argument saturate, so that they select nothing instead of overflowing.
func digits(s string) (n, v int) {
	for n < len(s) && isDigit(s[n]) {
		if v < 1<<20 {
			v = v*10 + int(s[n]-'0')
		}
		n++
	}
	return n, v
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// SkillDirVar is Claude Code's name for the skill's own folder in a body.
const SkillDirVar = "${CLAUDE_SKILL_DIR}"

// SubstituteSkillDir writes dir, the folder the skill is installed in, for
// each ${CLAUDE_SKILL_DIR} in body, as Claude Code does, so that a body's
// "run ${CLAUDE_SKILL_DIR}/scripts/x.py" names a real file. With no dir (a
// bundled skill served from the binary) the body is left as written.
func SubstituteSkillDir(body, dir string) string {
	if dir == "" || !strings.Contains(body, SkillDirVar) {
		return body
	}
	return strings.ReplaceAll(body, SkillDirVar, dir)
}
