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

// Annotations shared by the tools (SPEC §13): the file tools stay inside
// the workspace (a closed world); exec and shell_command run any program.
var local = sdk.OpenWorld(false)

// readOnly are the options of a tool that only reads the workspace.
func readOnly(title string) []sdk.ToolOption {
	return []sdk.ToolOption{sdk.WithTitle(title), sdk.ReadOnly(), sdk.Idempotent(), local}
}

// New builds the base skill for cfg. Zero fields take the SPEC defaults;
// describing the tools needs no Root.
func New(cfg Config) sdk.Skill {
	s := &service{cfg: cfg.withDefaults()}
	return sdk.NewSkill(
		tool("exec", descExec, s.exec, sdk.WithTitle("Run a program"), sdk.Destructive(true), sdk.OpenWorld(true)),
		tool("shell_command", descShell, s.shell, sdk.WithTitle("Run a shell command"), sdk.Destructive(true), sdk.OpenWorld(true)),
		tool("read_file", descRead, s.readFile, readOnly("Read a file")...),
		tool("write_file", descWrite, s.writeFile, sdk.WithTitle("Write a file"), sdk.Destructive(true), sdk.Idempotent(), local),
		tool("edit_file", descEdit, s.editFile, sdk.WithTitle("Edit a file"), sdk.Destructive(true), local),
		tool("apply_patch", descPatch, s.applyPatch, sdk.WithTitle("Apply a patch"), sdk.Destructive(true), local),
		tool("grep_files", descGrep, s.grep, readOnly("Search files")...),
		tool("list_dir", descList, s.listDir, readOnly("List a folder")...),
		tool("read_image_file", descImage, func(_ context.Context, in FileInput) (map[string]string, string, error) {
			return s.readBytes(in, MaxImageBytes, "image/", "read_image_file")
		}, readOnly("Read an image")...),
		tool("read_pdf_file", descPDF, func(_ context.Context, in FileInput) (map[string]string, string, error) {
			return s.readBytes(in, MaxPDFBytes, "application/pdf", "read_pdf_file")
		}, readOnly("Read a PDF")...),
		tool("todo", descTodo, s.todo, sdk.WithTitle("Update the todo list"), sdk.Destructive(false), local),
		tool("clear_todo", descClearTodo, s.clearTodo, sdk.WithTitle("Clear the todo list"), sdk.Destructive(true), sdk.Idempotent(), local),
		tool("attempt_completion", descCompletion, s.attemptCompletion, readOnly("Finish the task")...),
	)
}

// tool adapts a handler that also returns a message to sdk.NewTool.
func tool[In, Out any](name, desc string, fn func(context.Context, In) (Out, string, error), opts ...sdk.ToolOption) sdk.Tool {
	return sdk.NewTool(name, desc, func(ctx context.Context, in In) (Out, error) {
		v, msg, err := fn(ctx, in)
		if err == nil {
			sdk.Note(ctx, msg)
		}
		return v, err
	}, opts...)
}
