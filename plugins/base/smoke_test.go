package base

import "testing"

func TestSmoke(t *testing.T) {
	w := newTestWS(t, map[string]string{"a.txt": "one\ntwo\n", "sub/b.go": "package b\nfunc main() {}\n"})
	var rr ReadResult
	msg, code := w.call("read_file", map[string]any{"path": "a.txt"}, &rr)
	t.Logf("%v %q %+v", code, msg, rr)
	var lr ListResult
	msg, code = w.call("list_dir", map[string]any{}, &lr)
	t.Logf("%v %q %+v", code, msg, lr)
	var gr GrepResult
	msg, code = w.call("grep_files", map[string]any{"pattern": "func m"}, &gr)
	t.Logf("%v %q %+v", code, msg, gr)
	var er ExecResult
	msg, code = w.call("shell_command", map[string]any{"command": "echo hi; pwd; echo err >&2; exit 3"}, &er)
	t.Logf("%v %q %+v", code, msg, er)
	msg, code = w.call("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+three\n*** End Patch\n"}, nil)
	t.Logf("%v %q %q", code, msg, w.read("a.txt"))
	msg, code = w.call("todo", map[string]any{"new_todos": []string{"x", "y"}, "completed_todos": []int{}}, nil)
	t.Logf("%v %q", code, msg)
	var cr CompletionResult
	msg, code = w.call("attempt_completion", map[string]any{}, &cr)
	t.Logf("%v %q %+v", code, msg, cr)
}
