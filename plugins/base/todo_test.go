package base

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestTodo(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, nil)
	steps := []struct {
		tool  string
		args  map[string]any
		code  string
		todos []Todo
	}{
		{tool: "todo", args: map[string]any{}, todos: []Todo{}},
		{tool: "todo", args: map[string]any{"new_todos": []string{"write tests", "fix bug"}},
			todos: []Todo{{1, "write tests", false}, {2, "fix bug", false}}},
		{tool: "todo", args: map[string]any{"completed_todos": []int{1}, "new_todos": []string{"docs"}},
			todos: []Todo{{1, "write tests", true}, {2, "fix bug", false}, {3, "docs", false}}},
		{tool: "todo", args: map[string]any{"completed_todos": []int{9}}, code: CodeNotFound},
		{tool: "todo", args: map[string]any{"new_todos": []string{" "}}, code: CodeInvalidArgs},
		{tool: "clear_todo", args: map[string]any{}, todos: []Todo{}},
		{tool: "todo", args: map[string]any{"new_todos": []string{"again"}}, todos: []Todo{{1, "again", false}}},
	}
	for i, st := range steps {
		var r TodoResult
		msg, code := w.call(st.tool, st.args, &r)
		if code != st.code {
			t.Fatalf("step %d: code %q (%s), want %q", i, code, msg, st.code)
		}
		if code == "" && !reflect.DeepEqual(r.Todos, st.todos) {
			t.Fatalf("step %d: %+v, want %+v", i, r.Todos, st.todos)
		}
	}
	// The list is kept per workspace, in .agent/, and survives the plugin.
	var saved []Todo
	if err := json.Unmarshal([]byte(w.read(".agent/todos.json")), &saved); err != nil || len(saved) != 1 {
		t.Fatalf("saved list %v (%v)", saved, err)
	}
	other := newTestWS(t, nil)
	var r TodoResult
	other.call("todo", map[string]any{}, &r)
	if len(r.Todos) != 0 {
		t.Errorf("another workspace sees this one's todos: %+v", r.Todos)
	}
}

func TestAttemptCompletion(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, nil)
	var raw json.RawMessage
	if _, code := w.call("attempt_completion", map[string]any{}, &raw); code != "" || string(raw) != "{}" {
		t.Fatalf("no todos: %s %q, want {}", raw, code)
	}
	w.call("todo", map[string]any{"new_todos": []string{"a", "b"}}, nil)
	w.call("todo", map[string]any{"completed_todos": []int{1}}, nil)
	var r CompletionResult
	msg, _ := w.call("attempt_completion", map[string]any{}, &r)
	if len(r.RemainingTodos) != 1 || r.RemainingTodos[0].Title != "b" || !strings.Contains(msg, "1 todos are still open") {
		t.Fatalf("open todos %+v (%s)", r.RemainingTodos, msg)
	}
	w.call("todo", map[string]any{"completed_todos": []int{2}}, nil)
	if _, code := w.call("attempt_completion", map[string]any{}, &raw); code != "" || string(raw) != "{}" {
		t.Fatalf("all done: %s", raw)
	}
}

func TestTodoHiddenFromListings(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"a.txt": "todo"})
	w.call("todo", map[string]any{"new_todos": []string{"todo"}}, nil)
	var l ListResult
	w.call("list_dir", map[string]any{}, &l)
	if strings.Contains(l.Entries, ".agent") {
		t.Errorf("list_dir shows the state folder: %q", l.Entries)
	}
	var g GrepResult
	w.call("grep_files", map[string]any{"pattern": "todo"}, &g)
	if !reflect.DeepEqual(g.Files, []string{"a.txt"}) {
		t.Errorf("grep_files searched the state folder: %q", g.Files)
	}
}
