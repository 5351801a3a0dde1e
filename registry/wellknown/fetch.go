package wellknown

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/agentskills/agent/registry/gitsrc"
)

// Sentinel errors; fetches wrap them with what failed.
var (
	// ErrUnsafePath is an archive or index path outside the skill folder
	// (absolute, with .., a backslash) or a link that leaves it.
	ErrUnsafePath = errors.New("unsafe path in a well-known skill")
	// ErrDigestMismatch is an artifact whose sha256 is not the index's.
	ErrDigestMismatch = errors.New("digest mismatch")
)

// maxFiles bounds the files of one skill, as `npx skills` does.
const maxFiles = 1000

// Fetcher fetches well-known sources. The zero Fetcher uses its own
// HTTP client.
type Fetcher struct {
	Client *http.Client
}

// CheckURL accepts https, and http to a loopback host only (tests, a
// catalog on this machine): an index and its artifacts are trusted by
// what they hash to, but a skill's name and description are not, and a
// plain-text fetch lets anyone on the path change both.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", gitsrc.ErrUnsupportedSource, raw, err)
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%w %q: the URL has no host", gitsrc.ErrUnsupportedSource, raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%w %q: a well-known index is fetched over https (http only from this machine)", gitsrc.ErrUnsupportedSource, raw)
	}
	if _, set := u.User.Password(); set {
		return nil, fmt.Errorf("%w %q: the URL holds a password", gitsrc.ErrUnsupportedSource, raw)
	}
	return u, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IndexURLs are the index addresses of a site (https://host[/path]), in
// the order `npx skills` tries them. A site with a path is looked up under
// that path only: falling back to the host's root index would offer every
// skill the host publishes.
func IndexURLs(site string) []string {
	s := strings.TrimSuffix(site, "/")
	return []string{s + "/" + PathV2 + "/" + IndexFile, s + "/" + PathV1 + "/" + IndexFile}
}

// Candidate reports whether a parsed git source might be a well-known
// site instead, as `npx skills` decides: an http(s) URL not on a git
// forge and not ending in .git, with no ref or constraint.
func Candidate(src gitsrc.Source) bool {
	if src.Kind != gitsrc.KindGit || src.Ref != "" || src.Constraint != "" || src.Skill != "" || strings.HasSuffix(src.URL, ".git") {
		return false
	}
	u, err := CheckURL(src.URL)
	if err != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "github.com", "www.github.com", "gitlab.com", "raw.githubusercontent.com", "huggingface.co":
		return false
	}
	return true
}

// Resolve returns src as a well-known source when it is a Candidate and
// the site serves an index that parses; otherwise src unchanged, for git
// to fetch (and report on).
func (f *Fetcher) Resolve(ctx context.Context, src gitsrc.Source) gitsrc.Source {
	if !Candidate(src) {
		return src
	}
	for _, u := range IndexURLs(src.URL) {
		body, err := f.get(ctx, u, maxIndexBytes)
		if err != nil {
			continue
		}
		if _, _, err := Parse(body, u); err != nil {
			continue
		}
		out := gitsrc.Recorded(u)
		out.Raw = src.Raw
		return out
	}
	return src
}

// Fetch reads the index req.URL and the skills it lists. With no ref,
// every skill (or the one named req.Path) is fetched, the snapshot's
// commit is the index's own digest, and each folder is pinned by its
// skill's digest (gitsrc.Snapshot.PinOf). With a ref, which must be a
// sha256: digest, only the skills with that digest are fetched, and none
// is gitsrc.ErrRefNotFound: an index serves one version of each skill.
func (f *Fetcher) Fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, error) {
	if _, err := CheckURL(req.URL); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	if req.Constraint != "" {
		return nil, fmt.Errorf("fetch %s: %w: a well-known index has no versions to constrain; add the site without @%s", req.URL, gitsrc.ErrUnsupportedSource, req.Constraint)
	}
	pin := req.Ref
	if pin != "" && !digestRE.MatchString(pin) {
		return nil, fmt.Errorf("fetch %s: %w: a well-known skill is pinned by its sha256: digest, not %q", req.URL, gitsrc.ErrUnsupportedSource, pin)
	}
	if req.Progress != nil {
		fmt.Fprintf(req.Progress, "Reading %s\n", req.URL)
	}
	body, err := f.get(ctx, req.URL, maxIndexBytes)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	idx, skipped, err := Parse(body, req.URL)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	if skipped > 0 && req.Progress != nil {
		fmt.Fprintf(req.Progress, "warning: %s: %d entries do not follow the schema and were skipped\n", req.URL, skipped)
	}
	lim := limits{file: req.MaxFile, skill: gitsrc.DefaultSkillLimit}
	if lim.file <= 0 {
		lim.file = gitsrc.DefaultFileLimit
	}
	fsys := pinFS{MapFS: fstest.MapFS{}, pins: map[string]string{}}
	var total int64
	for _, s := range idx.Skills {
		if req.Path != "" && s.Name != req.Path || pin != "" && s.Digest != "" && s.Digest != pin {
			continue
		}
		files, digest, err := f.fetchSkill(ctx, s, lim)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: skill %s: %w", req.URL, s.Name, err)
		}
		if pin != "" && digest != pin {
			continue
		}
		for p, file := range files {
			total += int64(len(file.Data))
			fsys.MapFS[s.Name+"/"+p] = file
		}
		if total > lim.skill {
			return nil, fmt.Errorf("fetch %s: %w: the skills add up to more than %d bytes; add them one at a time (SITE#SKILL)", req.URL, gitsrc.ErrTooLarge, lim.skill)
		}
		fsys.pins[s.Name] = digest
	}
	snap := &gitsrc.Snapshot{Commit: "sha256:" + sum(body), Kind: "default", FS: fsys}
	if pin != "" {
		if len(fsys.pins) == 0 {
			return nil, fmt.Errorf("fetch %s: %w: no skill%s there has the digest %s any more (an index serves one version of each skill)", req.URL, gitsrc.ErrRefNotFound, inFolder(req.Path), pin)
		}
		snap.Commit, snap.Kind, snap.Ref = pin, "commit", pin
	}
	return snap, nil
}

func inFolder(p string) string {
	if p == "" {
		return ""
	}
	return " " + p
}

// pinFS is the fetched skills, each in a folder named after it, with the
// digest that pins it.
type pinFS struct {
	fstest.MapFS
	pins map[string]string
}

func (p pinFS) Pin(dir string) (string, bool) {
	d, ok := p.pins[dir]
	return d, ok
}

type limits struct{ file, skill int64 }

// fetchSkill fetches one skill's files (paths relative to its folder)
// and the digest that pins them: the index's, checked, for v0.2; for
// v0.1, which has none, the digest `npx skills` computes (each path and
// content, in path order, NUL after each).
func (f *Fetcher) fetchSkill(ctx context.Context, s Skill, lim limits) (map[string]*fstest.MapFile, string, error) {
	if _, err := CheckURL(s.URL); err != nil {
		return nil, "", err
	}
	switch s.Type {
	case TypeSkillMD, TypeArchive:
		max := lim.file
		if s.Type == TypeArchive {
			max = lim.skill
		}
		b, err := f.get(ctx, s.URL, max)
		if err != nil {
			return nil, "", err
		}
		if got := "sha256:" + sum(b); got != s.Digest {
			return nil, "", fmt.Errorf("%w: %s: the index says %s, the server sent %s; the site's copy was changed or damaged", ErrDigestMismatch, s.URL, s.Digest, got)
		}
		if s.Type == TypeSkillMD {
			return map[string]*fstest.MapFile{"SKILL.md": {Data: b, Mode: 0o644}}, s.Digest, nil
		}
		files, err := Unpack(b, lim.file, lim.skill)
		return files, s.Digest, err
	}
	files := map[string]*fstest.MapFile{}
	base, err := url.Parse(s.URL)
	if err != nil {
		return nil, "", err
	}
	var total int64
	for _, p := range s.Files {
		u := base.JoinPath(strings.Split(p, "/")...)
		b, err := f.get(ctx, u.String(), lim.file)
		if err != nil {
			return nil, "", err
		}
		if total += int64(len(b)); total > lim.skill {
			return nil, "", fmt.Errorf("%w: the files add up to more than %d bytes", gitsrc.ErrTooLarge, lim.skill)
		}
		files[p] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	return files, legacyDigest(files), nil
}

func legacyDigest(files map[string]*fstest.MapFile) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(files[p].Data)
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (f *Fetcher) client() *http.Client {
	if f != nil && f.Client != nil {
		return f.Client
	}
	return defaultClient
}

// defaultClient follows redirects only to addresses CheckURL accepts.
var defaultClient = &http.Client{
	Timeout: 2 * time.Minute,
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		_, err := CheckURL(req.URL.String())
		return err
	},
}

// get reads u whole, refusing more than max bytes.
func (f *Fetcher) get(ctx context.Context, u string, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", gitsrc.ErrUnreachable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: %s: 404 Not Found", gitsrc.ErrRepoNotFound, u)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w: %s: %s", gitsrc.ErrAuthRequired, u, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s is over %d bytes", gitsrc.ErrTooLarge, u, max)
	}
	return b, nil
}

// cleanArchivePath is an archive member's name as a path inside the
// skill folder, or an error: a leading "./" and a trailing "/" are
// dropped, nothing else is forgiven.
func cleanArchivePath(name string) (string, error) {
	p := strings.TrimSuffix(strings.TrimPrefix(name, "./"), "/")
	if err := checkPath(p); err != nil {
		return "", err
	}
	return p, nil
}

// linkInside reports whether a symbolic link at p (a path in the skill
// folder) to target stays inside the folder.
func linkInside(p, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsAny(target, "\\\x00") {
		return false
	}
	j := path.Join(path.Dir(p), target)
	return j != ".." && !strings.HasPrefix(j, "../")
}
