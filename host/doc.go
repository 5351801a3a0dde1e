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
//     Plugin.SHA256, else the error wraps ErrTampered and nothing runs, and
//     the bytes that were checked are the bytes that run. A first start
//     executes the installed file stopped at exec (ptrace) and checks the
//     file the kernel holds, which nobody can write while it runs;
//     restarts and "#!" plugins run from one sealed memfd copy per plugin
//     version, hashed as it was copied. A full hash is skipped only when a
//     settled fingerprint (size, device, inode, mtime and ctime in
//     nanoseconds, recorded when no writer had the file open) is unchanged.
//   - Lazy start: the process starts on the first Invoke and is shared by
//     all concurrent callers.
//   - Failures cost one structured error (*sdk.Error): plugin_crashed when
//     the process dies or the connection breaks mid-call, timeout when the
//     deadline passes (WithCallTimeout or the caller's context; the call is
//     canceled in the plugin, and a plugin that ignores that for
//     CancelGrace is killed), canceled when the caller gives up. The next
//     call after a crash starts a fresh process.
//   - Isolation: go-plugin over gRPC only, on a unix socket in a private
//     (0700) directory; the environment is exactly Plugin.Env (see
//     FilterEnv) plus go-plugin's variables and sdk.EnvLogLevel.
//   - Containment: each plugin runs in its own process group; when it
//     exits the group is killed and the pipes are closed after a short
//     drain, so a descendant holding stdout cannot make the host wait.
//     sdk.Serve is a subreaper that ends every descendant when the plugin
//     stops or its host dies (Pdeathsig); the host is a subreaper too and
//     ends the orphans of a plugin that died without doing so.
//   - Plugin logs (hclog JSON on stderr) go through the host's logger;
//     stray stdout output is logged at debug level and cannot break the
//     handshake.
package host
