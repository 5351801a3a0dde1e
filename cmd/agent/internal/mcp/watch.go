package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchRegistry calls changed after registry.json under home is written
// (add, update, remove, trust and untrust all rewrite it by rename), with
// the writes of one change gathered over reloadDelay. It watches home as
// well, since skills/ may not exist until the first add. It returns when
// ctx ends.
func watchRegistry(ctx context.Context, home string, log *slog.Logger, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", home, err)
	}
	defer w.Close()
	if err := os.MkdirAll(home, 0o755); err != nil {
		return fmt.Errorf("watch %s: %w", home, err)
	}
	skills := filepath.Join(home, "skills")
	if err := w.Add(home); err != nil {
		return fmt.Errorf("watch %s: %w", home, err)
	}
	watchingSkills := w.Add(skills) == nil
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			log.Warn("registry watch", "err", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			switch {
			case ev.Name == skills && !watchingSkills && ev.Has(fsnotify.Create):
				watchingSkills = w.Add(skills) == nil
				timer.Reset(reloadDelay)
			case filepath.Base(ev.Name) == "registry.json" && filepath.Dir(ev.Name) == skills:
				timer.Reset(reloadDelay)
			case ev.Name == skills && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)):
				watchingSkills = false
				timer.Reset(reloadDelay)
			}
		case <-timer.C:
			changed()
		}
	}
}
