package base

import (
	"context"

	"github.com/agentskills/agent/sdk"
)

// service holds the tools' shared configuration; each tool returns its
// value and the message for the caller.
type service struct {
	cfg Config
}

func (s *service) fs() (*fsys, error) { return openFS(s.cfg.Root, s.cfg.Home) }

// Tool descriptions: what a model reads, so they stay short.
const (
	descExec       = "Run a program with arguments (no shell) in the workspace. Returns its exit code and output (stdout and stderr interleaved; long output loses its middle). Not confined to the workspace by the OS."
	descShell      = "Run a /bin/sh command line (pipes, globs, redirects) in the workspace. Returns its exit code and output. Not confined to the workspace by the OS."
	descRead       = "Read a text file as numbered lines (L<n>: text), 2000 lines from offset at a time."
	descWrite      = "Create or replace a file with the given content; missing folders are created."
	descEdit       = "Replace exact text in a file. old_text must occur exactly once unless replace_all is set; re-read the file first."
	descPatch      = "Apply a patch in the *** Begin Patch format: *** Add File, *** Delete File, *** Update File with @@ hunks ( context, -removed, +added), *** Move to. All or nothing."
	descGrep       = "List files whose lines match an RE2 pattern, most recently changed first; honours .gitignore. Read them with read_file."
	descList       = "List a folder as an indented tree (folders end in /, links in @)."
	descImage      = "Read an image file (PNG, JPEG, GIF, WebP, BMP, at most 15 MB) so that you can see it."
	descPDF        = "Read a PDF file (at most 30 MB) as a document."
	descTodo       = "Keep a todo list for the task: add new_todos, mark completed_todos (ids) done. Returns the whole list."
	descClearTodo  = "Empty the todo list."
	descCompletion = "Call when the task is done: returns the todos still open (finish them first), or {} when none are."
)

// New builds the base skill for cfg. Zero fields take the SPEC defaults;
// describing the tools needs no Root.
func New(cfg Config) sdk.Skill {
	s := &service{cfg: cfg.withDefaults()}
	return sdk.NewSkill(
		tool("exec", descExec, s.exec),
		tool("shell_command", descShell, s.shell),
		tool("read_file", descRead, s.readFile),
		tool("write_file", descWrite, s.writeFile),
		tool("edit_file", descEdit, s.editFile),
		tool("apply_patch", descPatch, s.applyPatch),
		tool("grep_files", descGrep, s.grep),
		tool("list_dir", descList, s.listDir),
		tool("read_image_file", descImage, func(_ context.Context, in FileInput) (map[string]string, string, error) {
			return s.readBytes(in, MaxImageBytes, "image/", "read_image_file")
		}),
		tool("read_pdf_file", descPDF, func(_ context.Context, in FileInput) (map[string]string, string, error) {
			return s.readBytes(in, MaxPDFBytes, "application/pdf", "read_pdf_file")
		}),
		tool("todo", descTodo, s.todo),
		tool("clear_todo", descClearTodo, s.clearTodo),
		tool("attempt_completion", descCompletion, s.attemptCompletion),
	)
}

// tool adapts a handler that also returns a message to sdk.NewTool.
func tool[In, Out any](name, desc string, fn func(context.Context, In) (Out, string, error)) sdk.Tool {
	return sdk.NewTool(name, desc, func(ctx context.Context, in In) (Out, error) {
		v, msg, err := fn(ctx, in)
		if err == nil {
			sdk.Note(ctx, msg)
		}
		return v, err
	})
}
