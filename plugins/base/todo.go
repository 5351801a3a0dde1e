package base

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/flock"
	"github.com/agentskills/agent/internal/ground/platform"
)

// todoFile holds the todo list, per workspace, in the state folder.
const todoFile = "todos.json"

// Todo is one item of the list.
type Todo struct {
	ID        int    `json:"id"`
	Title     string `json:"title"`
	Completed bool   `json:"completed"`
}

// TodoInput is todo's input.
type TodoInput struct {
	NewTodos       []string `json:"new_todos,omitempty" description:"Tasks to add to the list"`
	CompletedTodos []int    `json:"completed_todos,omitempty" description:"ids of tasks that are done"`
}

// TodoResult is the whole list after a todo or clear_todo call.
type TodoResult struct {
	Todos []Todo `json:"todos"`
}

// NoInput is the input of tools that take none.
type NoInput struct{}

// CompletionResult is attempt_completion's result: the open todos, or an
// empty object when none is left.
type CompletionResult struct {
	RemainingTodos []Todo `json:"remaining_todos,omitempty"`
}

// todos runs fn on the list under an exclusive lock, so that two agents in
// the same workspace never lose each other's changes, and saves the list
// when fn changed it.
func (s *service) todos(fn func(list []Todo) ([]Todo, bool, error)) ([]Todo, error) {
	w, err := s.fs()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if w.inHomeRel(stateDir) {
		return nil, w.homeRefused(stateDir)
	}
	if err := w.root.MkdirAll(stateDir, 0o755); err != nil {
		return nil, w.fail(stateDir, err)
	}
	d, err := w.root.OpenRoot(stateDir)
	if err != nil {
		return nil, w.fail(stateDir, err)
	}
	defer d.Close()
	lock, err := d.OpenFile("todos.lock", os.O_RDWR|os.O_CREATE|platform.NoFollow, 0o644)
	if err != nil {
		return nil, w.fail(filepath.Join(stateDir, "todos.lock"), err)
	}
	defer lock.Close()
	if err := w.checkFile(lock, stateDir); err != nil {
		return nil, err
	}
	if err := flock.Lock(lock); err != nil {
		return nil, fmt.Errorf("lock the todo list: %w", err)
	}
	var list []Todo
	data, err := d.ReadFile(todoFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, w.fail(filepath.Join(stateDir, todoFile), err)
	default:
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%s/%s is not a todo list (%v); call clear_todo to start a new one", stateDir, todoFile, err)
		}
	}
	list, changed, err := fn(list)
	if err != nil || !changed {
		return list, err
	}
	data, err = json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteIn(d, todoFile, append(data, '\n'), 0o644, atomicfile.Umask()); err != nil {
		return nil, w.fail(filepath.Join(stateDir, todoFile), err)
	}
	return list, nil
}

func (s *service) todo(_ context.Context, in TodoInput) (TodoResult, string, error) {
	list, err := s.todos(func(list []Todo) ([]Todo, bool, error) {
		byID := map[int]int{}
		next := 1
		for i, t := range list {
			byID[t.ID] = i
			if t.ID > math.MaxInt-len(in.NewTodos)-1 && len(in.NewTodos) > 0 {
				// A hand-edited file: the next id would wrap around and
				// repeat one of the list's.
				return nil, false, errorf(CodeInvalidArgs, "%s/%s has id %d, too large to number new todos after it; call clear_todo to start a new list", stateDir, todoFile, t.ID)
			}
			next = max(next, t.ID+1)
		}
		for _, id := range in.CompletedTodos {
			i, ok := byID[id]
			if !ok {
				return nil, false, errorf(CodeNotFound, "there is no todo with id %d; the list has ids %s", id, ids(list))
			}
			list[i].Completed = true
		}
		for _, title := range in.NewTodos {
			if strings.TrimSpace(title) == "" {
				return nil, false, errorf(CodeInvalidArgs, "a new todo is empty; give each task a short title")
			}
			list = append(list, Todo{ID: next, Title: title})
			next++
		}
		return list, len(in.NewTodos)+len(in.CompletedTodos) > 0, nil
	})
	if err != nil {
		return TodoResult{}, "", err
	}
	return TodoResult{Todos: nonNil(list)}, fmt.Sprintf("%d open of %d", len(openTodos(list)), len(list)), nil
}

func (s *service) clearTodo(context.Context, NoInput) (TodoResult, string, error) {
	_, err := s.todos(func([]Todo) ([]Todo, bool, error) { return []Todo{}, true, nil })
	if err != nil {
		return TodoResult{}, "", err
	}
	return TodoResult{Todos: []Todo{}}, "the todo list is empty", nil
}

func (s *service) attemptCompletion(context.Context, NoInput) (CompletionResult, string, error) {
	list, err := s.todos(func(list []Todo) ([]Todo, bool, error) { return list, false, nil })
	if err != nil {
		return CompletionResult{}, "", err
	}
	left := openTodos(list)
	if len(left) == 0 {
		return CompletionResult{}, "no open todos", nil
	}
	return CompletionResult{RemainingTodos: left}, fmt.Sprintf("%d todos are still open; finish them, mark them done with todo, or clear_todo", len(left)), nil
}

func openTodos(list []Todo) []Todo {
	var out []Todo
	for _, t := range list {
		if !t.Completed {
			out = append(out, t)
		}
	}
	return out
}

func nonNil(list []Todo) []Todo {
	if list == nil {
		return []Todo{}
	}
	return list
}

func ids(list []Todo) string {
	if len(list) == 0 {
		return "none (it is empty)"
	}
	var s []string
	for _, t := range list {
		s = append(s, fmt.Sprint(t.ID))
	}
	return strings.Join(s, ", ")
}
