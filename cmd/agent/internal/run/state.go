package run

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentskills/agent/internal/ground/atomicfile"
)

// Sentinel errors of the state on disk.
var (
	ErrNoJob             = errors.New("no job to continue")
	ErrCheckpointMissing = errors.New("checkpoint not found")
	ErrJobCompleted      = errors.New("job is finished")
)

// Job is .agent/jobs/<jobId>/job.json.
type Job struct {
	ID          string    `json:"id"`
	Coordinator string    `json:"coordinator_run_id"`
	Model       string    `json:"model"`
	MaxSteps    int       `json:"max_steps"`
	Steps       int       `json:"steps"` // steps taken by every run of the job
	Status      string    `json:"status"`
	Result      string    `json:"result,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// RunSetting is runs/<runId>/run-setting.json: what a run was started with.
type RunSetting struct {
	JobID        string    `json:"job_id"`
	RunID        string    `json:"run_id"`
	ParentRunID  string    `json:"parent_run_id,omitempty"`
	Query        string    `json:"query"`
	Skill        string    `json:"skill,omitempty"` // the fork skill a delegated run runs
	Model        string    `json:"model"`
	Instruction  string    `json:"instruction,omitempty"`
	AllowedTools []string  `json:"allowed_tools,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// Statuses of a checkpoint and of a job.
const (
	StatusProceeding   = "proceeding"    // a step finished; the next one asks the model
	StatusCallingTools = "calling_tools" // the model answered; its tool calls are to run
	StatusCompleted    = "completed"
	StatusMaxSteps     = "stopped_by_max_steps"
	StatusInterrupted  = "stopped_by_interrupt"
	StatusFailed       = "stopped_by_error"
)

// Checkpoint is everything needed to resume a run.
type Checkpoint struct {
	ID       string    `json:"id"`
	JobID    string    `json:"job_id"`
	RunID    string    `json:"run_id"`
	Step     int       `json:"step"`
	Status   string    `json:"status"`
	Messages []Message `json:"messages"`
	// Pending are the tool calls of the step (StatusCallingTools): on
	// resume they run again, marked replayed.
	Pending []ToolCall `json:"pending,omitempty"`
	// Idle counts turns in a row without a tool call.
	Idle int `json:"idle,omitempty"`
	// Completing is set after attempt_completion found no open todo: the
	// next model call writes the run result.
	Completing bool      `json:"completing,omitempty"`
	Result     string    `json:"result,omitempty"`
	Error      string    `json:"error,omitempty"`
	Usage      Usage     `json:"usage"`
	CreatedAt  time.Time `json:"created_at"`
}

// Store is the state of every job under <workspace>/.agent/jobs.
type Store struct {
	Dir string

	mu     sync.Mutex
	lastTS int64
}

// NewStore opens the job store of a workspace root.
func NewStore(workspaceRoot string) *Store {
	return &Store{Dir: filepath.Join(workspaceRoot, ".agent", "jobs")}
}

// stamp is a timestamp in microseconds, unique within this process so that
// event and checkpoint names sort in the order they were written.
func (s *Store) stamp() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := time.Now().UnixMicro()
	if ts <= s.lastTS {
		ts = s.lastTS + 1
	}
	s.lastTS = ts
	return ts
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newJobID sorts by creation time, so the last job is the last name.
func newJobID(now time.Time) string {
	return now.UTC().Format("20060102T150405.000000Z") + "-" + newID()[:6]
}

func (s *Store) jobDir(id string) string { return filepath.Join(s.Dir, id) }
func (s *Store) runDir(job, run string) string {
	return filepath.Join(s.Dir, job, "runs", run)
}

// writeJSON writes v atomically: a temp file in the same folder, fsynced,
// then renamed, so that a reader or a resume never sees half a file.
func writeJSON(path string, v any) error { return writeFile(path, v, true) }

// writeFile is writeJSON with the fsync optional: events are a log that a
// resume does not read, so they are renamed into place (never seen half
// written) without paying for a sync each.
func writeFile(path string, v any, sync bool) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	data = append(data, '\n')
	var opts []atomicfile.Option
	if sync {
		opts = append(opts, atomicfile.Sync())
	}
	err = atomicfile.Write(path, data, 0o600, opts...)
	if errors.Is(err, fs.ErrNotExist) {
		// The first write of a run creates its folder.
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		err = atomicfile.Write(path, data, 0o600, opts...)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is corrupt: %w (remove the job folder or resume another checkpoint)", path, err)
	}
	return nil
}

// SaveJob writes job.json.
func (s *Store) SaveJob(j *Job) error {
	j.UpdatedAt = time.Now().UTC()
	return writeJSON(filepath.Join(s.jobDir(j.ID), "job.json"), j)
}

// LoadJob reads job.json.
func (s *Store) LoadJob(id string) (*Job, error) {
	var j Job
	if err := readJSON(filepath.Join(s.jobDir(id), "job.json"), &j); err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	return &j, nil
}

// LastJob is the most recently created job.
func (s *Store) LastJob() (*Job, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(s.Dir, e.Name(), "job.json")); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoJob, s.Dir)
	}
	sort.Strings(ids)
	return s.LoadJob(ids[len(ids)-1])
}

// SaveRunSetting writes run-setting.json.
func (s *Store) SaveRunSetting(rs *RunSetting) error {
	return writeJSON(filepath.Join(s.runDir(rs.JobID, rs.RunID), "run-setting.json"), rs)
}

// LoadRunSetting reads run-setting.json.
func (s *Store) LoadRunSetting(job, run string) (*RunSetting, error) {
	var rs RunSetting
	if err := readJSON(filepath.Join(s.runDir(job, run), "run-setting.json"), &rs); err != nil {
		return nil, fmt.Errorf("read the settings of run %s: %w", run, err)
	}
	return &rs, nil
}

// SaveCheckpoint writes checkpoint-<ts>-<step>-<id>.json.
func (s *Store) SaveCheckpoint(cp *Checkpoint) error {
	if cp.ID == "" {
		cp.ID = newID()
	}
	cp.CreatedAt = time.Now().UTC()
	name := fmt.Sprintf("checkpoint-%d-%d-%s.json", s.stamp(), cp.Step, cp.ID)
	// Renamed into place, not synced: a killed process loses nothing the
	// kernel has, and after a power loss LastCheckpoint falls back to the
	// newest checkpoint that reads whole. Two syncs a step would cost more
	// than the 5 ms a step may add (SPEC §16).
	return writeFile(filepath.Join(s.runDir(cp.JobID, cp.RunID), name), cp, false)
}

// checkpointFiles lists a run's checkpoints, oldest first.
func (s *Store) checkpointFiles(job, run string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(s.runDir(job, run), "checkpoint-*.json"))
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, k int) bool { return checkpointTS(files[i]) < checkpointTS(files[k]) })
	return files, nil
}

func checkpointTS(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(filepath.Base(path), "checkpoint-"), "-", 2)
	return fmt.Sprintf("%020s", parts[0])
}

// LastCheckpoint is a run's newest checkpoint.
func (s *Store) LastCheckpoint(job, run string) (*Checkpoint, error) {
	files, err := s.checkpointFiles(job, run)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: run %s of job %s has none yet", ErrCheckpointMissing, run, job)
	}
	var firstErr error
	for i := len(files) - 1; i >= 0; i-- {
		var cp Checkpoint
		err := readJSON(files[i], &cp)
		if err == nil {
			return &cp, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// FindCheckpoint finds a checkpoint by id in any job.
func (s *Store) FindCheckpoint(id string) (*Checkpoint, error) {
	if id == "" || strings.ContainsAny(id, `/\*?[`) {
		return nil, fmt.Errorf("%w: %q", ErrCheckpointMissing, id)
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, "*", "runs", "*", "checkpoint-*-"+id+".json"))
	if len(files) != 1 {
		return nil, fmt.Errorf("%w: no checkpoint %q under %s", ErrCheckpointMissing, id, s.Dir)
	}
	var cp Checkpoint
	if err := readJSON(files[0], &cp); err != nil {
		return nil, err
	}
	return &cp, nil
}
