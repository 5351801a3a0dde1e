package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// texts is every indexed skill's name and description, lowercased, by
// rowid: what Score reads. It is read once per refresh (key: the
// generation Replace counts up) and kept,
// because the SQLite driver spends about 3 µs a row fetching text, and a
// broad query matches thousands of rows: ranking them from memory takes
// the full-text index's rowids alone (bm25 needs a lookup per row too).
type texts struct {
	key  string
	rows map[int64]text
}

type text struct{ name, desc string }

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// generation is the count of Replaces the index has seen ("" before the
// first): what memos of the index are keyed by.
func generation(ctx context.Context, q queryRower) (string, error) {
	var g string
	if err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'generation'").Scan(&g); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return g, nil
}

type memo struct {
	mu sync.Mutex
	t  *texts
}

// textsIn returns the texts of the index tx sees, reading them again
// when a refresh (of this or another process) replaced the index.
func (d *DB) textsIn(ctx context.Context, tx *sql.Tx) (*texts, error) {
	key, err := generation(ctx, tx)
	if err != nil {
		return nil, err
	}
	d.memo.mu.Lock()
	defer d.memo.mu.Unlock()
	if t := d.memo.t; t != nil && t.key == key {
		return t, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT rowid, name, description FROM skills_fts")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &texts{key: key, rows: map[int64]text{}}
	for rows.Next() {
		var id int64
		var name, desc string
		if err := rows.Scan(&id, &name, &desc); err != nil {
			return nil, err
		}
		t.rows[id] = text{strings.ToLower(name), strings.ToLower(desc)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the names: %w", err)
	}
	d.memo.t = t
	return t, nil
}
