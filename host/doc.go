// Package host runs skill plugins as separate processes, so that a
// crashing or hostile plugin cannot take the agent down.
//
// Start with New, Register one Plugin per skill (this starts nothing) and
// Invoke tools by skill name; Close kills every plugin. Describe is the
// one-shot launch used at install time to record a plugin's tools, so that
// listing tools later needs no process.
//
// What the host guarantees:
//
//   - Integrity: before every launch the binary's sha256 must equal
//     Plugin.SHA256, else the error wraps ErrTampered and nothing runs. A
//     full hash is skipped only when the file's fingerprint (size, device,
//     inode, mtime and ctime in nanoseconds) matches the one recorded at the
//     last full check (kept under WithStateDir); any rewrite changes ctime.
//     The host then executes the very descriptor it checked
//     (/proc/self/fd/N), so swapping the path afterwards does not help.
//   - Lazy start: the process starts on the first Invoke and is shared by
//     all concurrent callers.
//   - Failures cost one structured error (*sdk.Error): plugin_crashed when
//     the process dies or the connection breaks mid-call, timeout when the
//     deadline passes (WithCallTimeout or the caller's context; the plugin
//     is killed), canceled when the caller gives up (the cancel reaches the
//     plugin). The next call starts a fresh process.
//   - Isolation: go-plugin over gRPC only, on a unix socket in a private
//     (0700) directory; the environment is exactly Plugin.Env (see
//     FilterEnv) plus go-plugin's variables and sdk.EnvLogLevel.
//   - No orphans: children get Pdeathsig=SIGKILL and sdk.Serve also exits
//     when its parent goes away.
//   - Plugin logs (hclog JSON on stderr) go through the host's logger;
//     stray stdout output is logged at debug level and cannot break the
//     handshake.
package host
