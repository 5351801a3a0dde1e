//go:build linux

package cli

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// The fixture of BenchmarkAddOneSkill (issue 37): one commit whose blobs
// are almost all in folders no skill needs: data/ holds
// addOneData × 1 MiB of random (incompressible) bytes, src/ small files,
// skills/ addOneSkills skills; the one added is skills/pdf.
const (
	addOneData    = 128
	addOneSrc     = 2000
	addOneSkills  = 50
	addOneVersion = "v1"
)

// addOneRepo returns the fixture's bare repository, generated once with
// git fast-import into the user's cache directory and reused.
func addOneRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "agent-bench", "addone-"+addOneVersion)
	dir := filepath.Join(root, "monorepo.git")
	if _, err := os.Stat(filepath.Join(root, "done")); err == nil {
		return dir
	}
	start := time.Now()
	_ = os.RemoveAll(root)
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	gitOut(b, root, "init", "-q", "--bare", "-b", "main", dir)
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	rng := rand.New(rand.NewChaCha8([32]byte{37}))
	raw := func(n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return p
	}
	text := func(n int) []byte { return []byte(base64.StdEncoding.EncodeToString(raw(n * 3 / 4))) }
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\ndata 8\nmonorepo\n")
	file := func(p string, mode string, data []byte) {
		fmt.Fprintf(w, "M %s inline %s\ndata %d\n", mode, p, len(data))
		w.Write(data)
		w.WriteString("\n")
	}
	for i := range addOneData {
		file(fmt.Sprintf("data/part%03d.bin", i), "644", raw(1<<20))
	}
	for i := range addOneSrc {
		file(fmt.Sprintf("src/pkg%02d/file%04d.go", i%40, i), "644", text(1024))
	}
	skill := func(name string) {
		file("skills/"+name+"/SKILL.md", "644", []byte("---\nname: "+name+"\ndescription: Skill "+name+" of the add-one fixture.\n---\nDo the thing.\n"))
		file("skills/"+name+"/scripts/run.sh", "755", []byte("#!/bin/sh\necho "+name+"\n"))
		file("skills/"+name+"/references/notes.md", "644", text(8192))
	}
	skill("pdf")
	for i := range addOneSkills - 1 {
		skill(fmt.Sprintf("skill-%02d", i))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s in %s", dir, time.Since(start))
	return dir
}

// countingHandler counts the bytes a handler sends.
type countingHandler struct {
	h http.Handler
	n atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.h.ServeHTTP(countingWriter{w, &c.n}, r)
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func (w countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// countingProxy forwards loopback TCP connections to addr and counts the
// bytes addr sends back: what a git:// client receives.
func countingProxy(b *testing.B, addr string) (string, *atomic.Int64) {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	n := new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() {
					_, _ = io.Copy(up, c)
					up.(*net.TCPConn).CloseWrite()
				}()
				k, _ := io.Copy(c, up)
				n.Add(k)
			}()
		}
	}()
	return l.Addr().String(), n
}

// BenchmarkAddOneSkill runs `agent skill add <monorepo> pdf` against
// `git clone --depth 1` of the same repository, alternating the two in
// each iteration (the clone first in odd ones), over loopback `git
// http-backend` (http/) and `git daemon` (git/). filter=on serves
// uploadpack.allowFilter and allowAnySHA1InWant (the partial fetch: trees,
// then the skill's blobs by id); filter=off is git's defaults (the depth-1
// fetch of every blob). ns/op is the add alone; ratio-to-git-clone is the
// median add over the median clone of the same run
// (cpu-ratio-to-git-clone the same for user + system time, the clone's
// helpers included); the bytes are what the server sent.
func BenchmarkAddOneSkill(b *testing.B) {
	repo := addOneRepo(b)
	agent := agentBinary(b)
	for _, tc := range []struct {
		proto  string
		filter bool
	}{{"http", true}, {"http", false}, {"git", true}, {"git", false}} {
		b.Run(fmt.Sprintf("%s/filter=%s", tc.proto, map[bool]string{true: "on", false: "off"}[tc.filter]), func(b *testing.B) {
			var cfg []string
			if tc.filter {
				cfg = gittest.PartialClone
			}
			var u string
			var sent *atomic.Int64
			if tc.proto == "http" {
				srv := &countingHandler{h: gittest.Handler(b, filepath.Dir(repo), cfg...)}
				u, sent = gittest.ServeHandler(b, srv), &srv.n
			} else {
				d := gittest.ServeDaemon(b, filepath.Dir(repo), cfg...)
				var addr string
				addr, sent = countingProxy(b, strings.TrimPrefix(d, "git://"))
				u = "git://" + addr
			}
			u += "/" + filepath.Base(repo)
			var adds, clones, addCPU, cloneCPU []time.Duration
			var addBytes, cloneBytes int64
			i := 0
			for b.Loop() {
				tmp := b.TempDir()
				env := []string{"AGENT_HOME=" + filepath.Join(tmp, "home"), "PATH=" + os.Getenv("PATH"), "HOME=" + tmp}
				clone := func() {
					b.StopTimer()
					sent.Store(0)
					d, cpu := runAgent(b, "git", env, "clone", "-q", "--depth", "1", u, filepath.Join(tmp, "clone"))
					clones, cloneCPU = append(clones, d), append(cloneCPU, cpu)
					cloneBytes += sent.Load()
					if err := os.RemoveAll(filepath.Join(tmp, "clone")); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if i%2 == 1 {
					clone()
				}
				sent.Store(0)
				d, cpu := runAgent(b, agent, env, "skill", "add", u, "pdf", "--trust")
				adds, addCPU = append(adds, d), append(addCPU, cpu)
				addBytes += sent.Load()
				if i%2 == 0 {
					clone()
				}
				i++
				b.StopTimer()
				if err := os.RemoveAll(tmp); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(median(adds))/float64(median(clones)), "ratio-to-git-clone")
			b.ReportMetric(float64(median(addCPU))/float64(median(cloneCPU)), "cpu-ratio-to-git-clone")
			b.ReportMetric(float64(addBytes)/float64(i)/(1<<20), "MB-received/op")
			b.ReportMetric(float64(cloneBytes)/float64(i)/(1<<20), "clone-MB-received/op")
			b.ReportMetric(float64(median(clones).Microseconds())/1000, "clone-ms")
		})
	}
}
