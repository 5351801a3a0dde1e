package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver: agent builds without cgo
)

// ErrNotFound matches a skill ID the index does not hold.
var ErrNotFound = errors.New("no such skill in the catalog")

// DB is a catalog's index: an SQLite database with an FTS5 index over
// the skills' names and descriptions. A refresh replaces the whole index
// in one transaction, so a reader (or a process that opens the file after
// a crash) sees the last complete index, never part of one.
type DB struct {
	db   *sql.DB
	path string
	memo memo
}

const schema = `
CREATE TABLE IF NOT EXISTS skills (
	rowid INTEGER PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL,
	data TEXT NOT NULL,
	manifest TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS skills_fts USING fts5(name, description, tokenize = 'unicode61');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`

// Open opens (creating) the index at path.
func Open(path string) (*DB, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open the catalog %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the catalog %s: %w", path, err)
	}
	return &DB{db: db, path: path}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// afterInsert, when set (tests), runs after each skill a Replace writes,
// inside its transaction.
var afterInsert func(i int)

// Replace makes skills the whole index, in one transaction.
func (d *DB) Replace(ctx context.Context, skills []Skill, at time.Time) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	defer tx.Rollback()
	for _, q := range []string{"DELETE FROM skills", "DELETE FROM skills_fts"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
		}
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO skills (rowid, id, name, data, manifest) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	defer ins.Close()
	fts, err := tx.PrepareContext(ctx, "INSERT INTO skills_fts (rowid, name, description) VALUES (?, ?, ?)")
	if err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	defer fts.Close()
	seen := map[string]bool{}
	n := 0
	for _, s := range skills {
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		n++
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, n, s.ID, s.Name, string(data), s.Manifest); err != nil {
			return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
		}
		if _, err := fts.ExecContext(ctx, n, s.Name, s.Description); err != nil {
			return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
		}
		if afterInsert != nil {
			afterInsert(n)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES ('refreshed', ?), ('count', ?)",
		at.UTC().Format(time.RFC3339), fmt.Sprint(n)); err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	// The generation tells readers' memos (textsIn) that the index changed.
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"); err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("refresh the catalog %s: %w", d.path, err)
	}
	return nil
}

// Refreshed is when the index was last replaced and how many skills it
// holds; the zero time when it never was.
func (d *DB) Refreshed(ctx context.Context) (time.Time, int, error) {
	var at, count string
	err := d.db.QueryRowContext(ctx, "SELECT (SELECT value FROM meta WHERE key = 'refreshed'), (SELECT value FROM meta WHERE key = 'count')").Scan(
		(*nullString)(&at), (*nullString)(&count))
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("read the catalog %s: %w", d.path, err)
	}
	t, _ := time.Parse(time.RFC3339, at)
	var n int
	fmt.Sscan(count, &n)
	return t, n, nil
}

type nullString string

func (n *nullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n = ""
	case string:
		*n = nullString(x)
	case []byte:
		*n = nullString(x)
	default:
		return fmt.Errorf("unexpected %T", v)
	}
	return nil
}

// Search returns at most limit skills for query, ranked as Rank does;
// an empty query lists skills by name. The full-text index picks the
// skills that match a word (by token prefix); Score orders them, reading
// names and descriptions from memory (textsIn), then the shorter name
// and description; only the skills returned are decoded. One read
// transaction sees one index throughout, whatever a refresh does.
func (d *DB) Search(ctx context.Context, query string, limit int) ([]Skill, error) {
	words := Words(query)
	if len(words) == 0 {
		return d.skills(ctx, "SELECT data FROM skills ORDER BY name, id LIMIT ?", limit)
	}
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"*`
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	defer tx.Rollback()
	t, err := d.textsIn(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT rowid FROM skills_fts WHERE skills_fts MATCH ?", strings.Join(terms, " OR "))
	if err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	type hit struct {
		rowid int64
		sc    float64
		text
	}
	var hits []hit
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.rowid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search the catalog: %w", err)
		}
		h.text = t.rows[h.rowid]
		h.sc = scoreLower(words, h.name, h.desc)
		hits = append(hits, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.sc, a.sc), cmp.Compare(len(a.name), len(b.name)), cmp.Compare(len(a.desc), len(b.desc)),
			strings.Compare(a.name, b.name), cmp.Compare(a.rowid, b.rowid))
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]string, len(hits))
	args := make([]any, len(hits))
	at := map[int64]int{}
	for i, h := range hits {
		ids[i], args[i], at[h.rowid] = "?", h.rowid, i
	}
	rows, err = tx.QueryContext(ctx, "SELECT rowid, data FROM skills WHERE rowid IN ("+strings.Join(ids, ",")+")", args...)
	if err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	defer rows.Close()
	out := make([]Skill, len(hits))
	for rows.Next() {
		var rowid int64
		var data string
		if err := rows.Scan(&rowid, &data); err != nil {
			return nil, fmt.Errorf("search the catalog: %w", err)
		}
		if err := json.Unmarshal([]byte(data), &out[at[rowid]]); err != nil {
			return nil, fmt.Errorf("search the catalog: %w", err)
		}
	}
	return out, rows.Err()
}

// skills runs a query whose rows are one data column each.
func (d *DB) skills(ctx context.Context, query string, args ...any) ([]Skill, error) {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search the catalog: %w", err)
	}
	defer rows.Close()
	var out []Skill
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("search the catalog: %w", err)
		}
		var s Skill
		if err := json.Unmarshal([]byte(data), &s); err != nil {
			return nil, fmt.Errorf("search the catalog: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Get returns the skill with id, with its SKILL.md text.
func (d *DB) Get(ctx context.Context, id string) (Skill, error) {
	var data, m string
	err := d.db.QueryRowContext(ctx, "SELECT data, manifest FROM skills WHERE id = ?", id).Scan(&data, &m)
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("read the catalog: %w", err)
	}
	var s Skill
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		return Skill{}, fmt.Errorf("read the catalog: %w", err)
	}
	s.Manifest = m
	return s, nil
}

// All returns every skill, by name, with its SKILL.md text.
func (d *DB) All(ctx context.Context) ([]Skill, error) {
	rows, err := d.db.QueryContext(ctx, "SELECT data, manifest FROM skills ORDER BY name, id")
	if err != nil {
		return nil, fmt.Errorf("read the catalog: %w", err)
	}
	defer rows.Close()
	var out []Skill
	for rows.Next() {
		var data, m string
		if err := rows.Scan(&data, &m); err != nil {
			return nil, fmt.Errorf("read the catalog: %w", err)
		}
		var s Skill
		if err := json.Unmarshal([]byte(data), &s); err != nil {
			return nil, fmt.Errorf("read the catalog: %w", err)
		}
		s.Manifest = m
		out = append(out, s)
	}
	return out, rows.Err()
}
