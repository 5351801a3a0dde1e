package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// The MCP skills extension (SEP-2640; ext-skills
// specification/stable/skills.mdx): skills/list, skills/get and
// resources/directory/read over the skill:// resources the server already
// serves. SPEC §13.
const (
	// SkillsExtension is the extension's identifier under
	// capabilities.extensions.
	SkillsExtension = "io.modelcontextprotocol/skills"
	// DirectoryMIME is the mimeType of a directory resource.
	DirectoryMIME = "inode/directory"

	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"

	// The extension's per-skill limits: a server SHOULD NOT serve a skill
	// over either.
	maxSkillFiles = 512
	maxSkillBytes = 16 << 20

	// skillsTTLMs is the freshness hint of every skills result. A change
	// also sends resources/list_changed (the extension has no list_changed
	// of its own), so the hint only bounds how stale a client that ignores
	// notifications gets.
	skillsTTLMs = 60_000
	// skillsCacheScope: the skills are one user's AGENT_HOME.
	skillsCacheScope = "private"
	// DefaultPageSize is how many skills (or directory children) one page
	// of skills/list (or resources/directory/read) holds.
	DefaultPageSize = 100
)

// skillTree is one active skill's files as served: resources/list,
// skills/list and resources/directory/read all show this set. The rule is
// the integrity hash's (every regular file, __pycache__ left out), so the
// manifest is complete; .git at the top of a linked folder is not part of
// the skill.
type skillTree struct {
	name  string
	dir   string
	files []string // slash paths, sorted
}

// skillTrees walks each active skill's folder once per generation.
func skillTrees(ws *workspace.Workspace, bundledDir string, log *slog.Logger) map[string]*skillTree {
	out := map[string]*skillTree{}
	for _, as := range ws.Active {
		dir := as.Entry.Path
		if dir == "" && workspace.IsBundled(as.Entry) {
			// A bundled skill's SKILL.md is embedded: served from a copy,
			// so that it is listed and read like any other skill's.
			dir = bundledCopy(bundledDir, as.Entry.Canonical, log)
		}
		if dir == "" || !workspace.DirExists(dir) {
			continue
		}
		tree := &skillTree{name: as.Entry.Canonical, dir: dir}
		_ = fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if d.Name() == "__pycache__" || p == ".git" {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if len(tree.files) == maxResources {
				log.Warn("skill has too many files; the rest are not served as resources", "skill", tree.name, "limit", maxResources)
				return fs.SkipAll
			}
			tree.files = append(tree.files, p)
			return nil
		})
		sort.Strings(tree.files)
		out[tree.name] = tree
	}
	return out
}

// skillEntry is the extension's Skill.
type skillEntry struct {
	URI         string           `json:"uri"`
	Frontmatter map[string]any   `json:"frontmatter"`
	Resources   []*skillResource `json:"resources"`
}

// skillResource is the extension's SkillResource.
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// skillCatalog is every servable skill's entry, built on the first
// skills request of a generation.
type skillCatalog struct {
	once    sync.Once
	entries []*skillEntry // sorted by URI
	byURI   map[string]*skillEntry
}

// catalog returns gen's skill entries, building them once: digests come
// from the integrity records written at install (no file is read again),
// sizes from stat, frontmatter from each SKILL.md.
func (s *Server) catalog(gen *generation) *skillCatalog {
	c := &gen.skills
	c.once.Do(func() {
		c.byURI = map[string]*skillEntry{}
		store := gen.ws.Config.Store()
		for _, as := range gen.ws.Active {
			tree := gen.trees[as.Entry.Canonical]
			if tree == nil {
				continue
			}
			digests := func() (map[string]string, error) { return store.FileDigests(*as.Entry) }
			if workspace.IsBundled(as.Entry) {
				digests = func() (map[string]string, error) { return hashFiles(tree) }
			}
			e, err := skillEntryOf(tree, digests)
			if err != nil {
				s.log.Warn("skill is not served through the skills extension (its files stay readable as resources)", "skill", tree.name, "reason", err.Error())
				continue
			}
			c.entries = append(c.entries, e)
			c.byURI[e.URI] = e
		}
		sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].URI < c.entries[j].URI })
	})
	return c
}

// skillEntryOf builds one skill's entry, or says why the skill cannot be
// served as one.
func skillEntryOf(tree *skillTree, digests func() (map[string]string, error)) (*skillEntry, error) {
	if len(tree.files) > maxSkillFiles {
		return nil, fmt.Errorf("it has more than %d files, the extension's limit", maxSkillFiles)
	}
	root, err := os.OpenRoot(tree.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	name := workspace.ManifestName(func(n string) bool { return slices.Contains(tree.files, n) })
	if name == "" {
		return nil, fmt.Errorf("it has no SKILL.md")
	}
	md, err := root.ReadFile(name)
	if err != nil {
		return nil, err
	}
	fm, err := frontmatterValues(md)
	if err != nil {
		return nil, err
	}
	if err := checkFrontmatter(tree.name, fm); err != nil {
		return nil, err
	}
	sums, err := digests()
	if err != nil {
		return nil, err
	}
	e := &skillEntry{URI: ResourceURI(tree.name, name), Frontmatter: fm}
	var total int64
	for _, rel := range tree.files {
		sum, ok := sums[rel]
		if !ok {
			return nil, fmt.Errorf("%s was added since install; see 'agent skill verify %s'", rel, tree.name)
		}
		fi, err := root.Lstat(rel)
		if err != nil {
			return nil, err
		}
		total += fi.Size()
		e.Resources = append(e.Resources, &skillResource{URI: ResourceURI(tree.name, rel), Digest: "sha256:" + sum, Size: fi.Size()})
	}
	if total > maxSkillBytes {
		return nil, fmt.Errorf("its files hold %d bytes, over the extension's limit of %d", total, maxSkillBytes)
	}
	return e, nil
}

var skillNameRE = lazyregexp.New(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// checkFrontmatter applies the rules a client checks an entry against
// (Agent Skills names and lengths, and the URI's last segment equal to the
// name), so that one odd skill does not make a client refuse the listing.
func checkFrontmatter(canonical string, fm map[string]any) error {
	name, _ := fm["name"].(string)
	switch {
	case name == "":
		return fmt.Errorf("its frontmatter has no name")
	case len(name) > 64 || !skillNameRE.MatchString(name):
		return fmt.Errorf("its name %q is not 1-64 lowercase letters, digits and single hyphens", name)
	case name != canonical:
		return fmt.Errorf("its name %q differs from its canonical name %q", name, canonical)
	}
	desc, _ := fm["description"].(string)
	if n := utf8.RuneCountInString(desc); n == 0 || n > 1024 {
		return fmt.Errorf("its description is not a string of 1-1024 characters")
	}
	if c, ok := fm["compatibility"]; ok {
		if s, _ := c.(string); s == "" || utf8.RuneCountInString(s) > 500 {
			return fmt.Errorf("its compatibility is not a string of 1-500 characters")
		}
	}
	if md, ok := fm["metadata"]; ok {
		m, ok := md.(map[string]any)
		if !ok {
			return fmt.Errorf("its metadata is not a mapping of strings to strings")
		}
		for k, v := range m {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("its metadata.%s is not a string; quote it", k)
			}
		}
	}
	return nil
}

// cacheable are the fields every skills result carries.
type cacheable struct {
	ResultType string `json:"resultType"`
	TTLMs      int64  `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

func complete() cacheable {
	return cacheable{ResultType: "complete", TTLMs: skillsTTLMs, CacheScope: skillsCacheScope}
}

type listSkillsParams struct {
	sdkmcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	sdkmcp.ResultBase
	cacheable
	Skills     []*skillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

type getSkillParams struct {
	sdkmcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	sdkmcp.ResultBase
	cacheable
	Skill *skillEntry `json:"skill"`
}

type readDirectoryParams struct {
	sdkmcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirectoryResult struct {
	sdkmcp.ResultBase
	cacheable
	Resources  []*sdkmcp.Resource `json:"resources"`
	NextCursor string             `json:"nextCursor,omitempty"`
}

// addSkillsExtension declares the extension and registers its methods.
func (s *Server) addSkillsExtension(caps *sdkmcp.ServerCapabilities) {
	caps.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
}

// registerSkillsMethods adds the extension's methods to srv; they are not
// standard methods, so registration cannot fail.
func (s *Server) registerSkillsMethods() {
	must(sdkmcp.AddReceivingCustomMethod(s.srv, methodSkillsList, s.listSkills))
	must(sdkmcp.AddReceivingCustomMethod(s.srv, methodSkillsGet, s.getSkill))
	must(sdkmcp.AddReceivingCustomMethod(s.srv, methodDirectoryRead, s.readDirectory))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) listSkills(_ context.Context, _ *sdkmcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	gen, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer gen.calls.Done()
	var cursor string
	if p != nil {
		cursor = p.Cursor
	}
	c := s.catalog(gen)
	page, next, err := paginate(c.entries, cursor, s.pageSize(), func(e *skillEntry) string { return e.URI })
	if err != nil {
		return nil, err
	}
	return &listSkillsResult{cacheable: complete(), Skills: page, NextCursor: next}, nil
}

func (s *Server) getSkill(_ context.Context, _ *sdkmcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams(`skills/get takes {"uri": "skill://<name>/SKILL.md"}`)
	}
	gen, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer gen.calls.Done()
	e, ok := s.catalog(gen).byURI[p.URI]
	if !ok {
		return nil, invalidParams("No skill is served at %s; skills/list lists the skills served", p.URI)
	}
	return &getSkillResult{cacheable: complete(), Skill: e}, nil
}

func (s *Server) readDirectory(_ context.Context, _ *sdkmcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams(`resources/directory/read takes {"uri": "skill://<name>[/<folder>]"}`)
	}
	gen, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer gen.calls.Done()
	skill, dir, ok := splitSkillURI(p.URI)
	tree := gen.trees[skill]
	if !ok || tree == nil {
		return nil, invalidParams("%s is not a directory resource: no skill is served there", p.URI)
	}
	children, ok := tree.children(dir)
	if !ok {
		return nil, invalidParams("%s is not a directory resource", p.URI)
	}
	page, next, err := paginate(children, p.Cursor, s.pageSize(), func(r *sdkmcp.Resource) string { return r.URI })
	if err != nil {
		return nil, err
	}
	return &readDirectoryResult{cacheable: complete(), Resources: page, NextCursor: next}, nil
}

// splitSkillURI splits skill://<name>[/<dir>] into the skill and the
// folder inside it ("" for the root).
func splitSkillURI(uri string) (skill, dir string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != ResourceScheme || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", false
	}
	dir = strings.TrimPrefix(u.Path, "/")
	if strings.HasSuffix(dir, "/") || path.Clean("/"+dir) != "/"+dir && dir != "" {
		return "", "", false
	}
	return u.Host, dir, true
}

// children lists the direct children of dir ("" is the root): files as
// resources, folders as directory resources. ok is false when dir is not
// a folder of the skill.
func (t *skillTree) children(dir string) (out []*sdkmcp.Resource, ok bool) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]bool{}
	for _, f := range t.files {
		rest, found := strings.CutPrefix(f, prefix)
		if !found {
			continue
		}
		ok = true
		if sub, _, isDir := strings.Cut(rest, "/"); isDir {
			if !seen[sub] {
				seen[sub] = true
				out = append(out, &sdkmcp.Resource{URI: ResourceURI(t.name, prefix+sub), Name: sub, MIMEType: DirectoryMIME})
			}
			continue
		}
		out = append(out, &sdkmcp.Resource{URI: ResourceURI(t.name, f), Name: rest, MIMEType: mimeOf(f)})
	}
	if dir == "" {
		ok = true // the root of a served skill is a folder, even if empty
	}
	slices.SortFunc(out, func(a, b *sdkmcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	return out, ok
}

func (s *Server) pageSize() int {
	if s.opts.PageSize > 0 {
		return s.opts.PageSize
	}
	return DefaultPageSize
}

// paginate returns the page of items (sorted by key) after cursor, and
// the cursor of the next page. A cursor is the key of the last item sent,
// so a page stays correct when the list changes between requests.
func paginate[T any](items []T, cursor string, size int, key func(T) string) (page []T, next string, err error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", invalidParams("invalid cursor %q: pass back a nextCursor as it was sent", cursor)
		}
		after := string(b)
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	}
	end := min(start+size, len(items))
	page = items[start:end]
	if page == nil {
		page = []T{}
	}
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1])))
	}
	return page, next, nil
}

// bundledCopy writes the embedded SKILL.md of a bundled skill under
// parent (rewritten when it differs) and returns its folder; "" when
// parent is "" or the copy fails.
func bundledCopy(parent, canonical string, log *slog.Logger) string {
	data, ok := workspace.BundledFile(canonical)
	if parent == "" || !ok {
		return ""
	}
	dir := filepath.Join(parent, canonical)
	file := filepath.Join(dir, "SKILL.md")
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Warn("bundled skill is not served as a skill", "skill", canonical, "reason", err.Error())
		return ""
	}
	if err := atomicfile.Write(file, data, 0o644); err != nil {
		log.Warn("bundled skill is not served as a skill", "skill", canonical, "reason", err.Error())
		return ""
	}
	return dir
}

// hashFiles is the sha256 of each file of a tree with no integrity
// record (a bundled skill's copy).
func hashFiles(tree *skillTree) (map[string]string, error) {
	root, err := os.OpenRoot(tree.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := make(map[string]string, len(tree.files))
	for _, rel := range tree.files {
		b, err := root.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
	}
	return out, nil
}
