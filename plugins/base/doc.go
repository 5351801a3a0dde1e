// Package base is the bundled `base` skill (SPEC §14): file, search, edit
// and exec tools for an agent working in a folder, the workspace.
//
// It ships inside the agent binary and is served like the exec plugin:
// the host re-executes `agent __plugin base`, whose whole body is Main.
// Main reads a Config (the workspace root, AGENT_HOME, the host's
// environment, limits) as JSON from AGENT_BASE_CONFIG and serves New(cfg).
//
// Where to start reading:
//
//   - paths.go: the isolation. Every file tool goes through an os.Root
//     opened on the workspace, so `..`, absolute paths elsewhere and
//     symbolic links that lead out fail with path_outside_workspace; the
//     kernel's path of each opened file or folder is checked against
//     AGENT_HOME, which is refused even inside the workspace. Writes are a
//     temporary file renamed inside the held parent folder.
//   - files.go: read_file, write_file, edit_file, list_dir,
//     read_image_file and read_pdf_file (whose result is exactly
//     {"mime_type", "data"}, base64, for MCP image and resource content).
//   - patch.go: ParsePatch and apply_patch; every hunk is applied in memory
//     before any file is written, and a failed write undoes the others.
//   - grep.go: grep_files, RE2 with literal prefilters, .gitignore through
//     go-git's gitignore package, parallel reads, newest files first.
//   - exec.go: exec and shell_command. Commands run in their own process
//     group, which a timeout kills whole; output is kept middle-out
//     (truncate.go). They are NOT confined to the workspace by the OS: a
//     command can read and write whatever the user running agent can.
//   - todo.go: todo, clear_todo and attempt_completion, with the list in
//     .agent/todos.json of the workspace.
//
// Every tool failure is an *sdk.Error with one of the Code* constants.
package base
