package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Limits on a search API's answer.
const (
	// MaxAnswerBytes bounds the body read from a search API.
	MaxAnswerBytes  = 4 << 20
	maxAnswerSkills = 1000
	maxFieldLen     = 512
)

// ErrBadAnswer matches a search API answer that is not the skills.sh
// shape {"skills":[{"id","name","installs","source"}]}.
var ErrBadAnswer = errors.New("not a skills.sh search answer")

// APIAnswer is the skills.sh search API's answer (GET /api/search).
type APIAnswer struct {
	Skills []APISkill `json:"skills"`
}

// APISkill is one skill in an APIAnswer.
type APISkill struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Installs int    `json:"installs"`
	Source   string `json:"source"`
}

// ParseAnswer reads a search API's answer into skills of KindIndex. An
// entry without a name or a source is skipped; control characters are
// removed (the text reaches a terminal); installs below zero count as 0.
func ParseAnswer(body []byte) ([]Skill, error) {
	var raw struct {
		Skills []struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Installs json.RawMessage `json:"installs"`
			Source   string          `json:"source"`
			// Description is not in the skills.sh answer; a catalog
			// adds it.
			Description string `json:"description"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	if raw.Skills == nil {
		return nil, fmt.Errorf("%w: no skills list", ErrBadAnswer)
	}
	if len(raw.Skills) > maxAnswerSkills {
		raw.Skills = raw.Skills[:maxAnswerSkills]
	}
	out := []Skill{}
	for _, r := range raw.Skills {
		name, source := clean(r.Name), clean(r.Source)
		if source == "" {
			// skills.sh ids are owner/repo/skill.
			if i := strings.LastIndex(clean(r.ID), "/"); i > 0 {
				source = clean(r.ID)[:i]
			}
		}
		if name == "" || source == "" {
			continue
		}
		s := Skill{ID: ID(source, name), Name: name, Description: clean(r.Description), Source: source, Kind: KindIndex, Installs: installs(r.Installs)}
		out = append(out, s)
	}
	return out, nil
}

// installs reads a count that may be a number, a float or absent.
func installs(raw json.RawMessage) int {
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil || math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(f)
}

// clean drops control and format characters and bounds the length.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxFieldLen {
		s = strings.ToValidUTF8(s[:maxFieldLen], "")
	}
	return s
}

// QueryAPI asks the search API at base (https://skills.sh, or a catalog)
// for query: GET base/api/search?q=&limit=, as `npx skills find` does.
func QueryAPI(ctx context.Context, client *http.Client, base, query string, limit int) ([]Skill, error) {
	u, err := url.Parse(strings.TrimRight(base, "/") + "/api/search")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search %s: not an http(s) URL", base)
	}
	u.RawQuery = url.Values{"q": {query}, "limit": {strconv.Itoa(limit)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", base, err)
	}
	req.Header.Set("Accept", "application/json")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("search %s: %s", base, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", base, err)
	}
	if len(body) > MaxAnswerBytes {
		return nil, fmt.Errorf("search %s: %w: the answer is larger than %d bytes", base, ErrBadAnswer, MaxAnswerBytes)
	}
	skills, err := ParseAnswer(body)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", base, err)
	}
	return skills, nil
}
