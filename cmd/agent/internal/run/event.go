package run

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// Event types. Each is written to event-<ts>-<step>-<type>.json and handed
// to Options.OnEvent; TypeText is handed over only, as it streams.
const (
	TypeStartRun    = "start_run"
	TypeResumeRun   = "resume_run"
	TypeModelReply  = "model_reply"
	TypeCallTool    = "call_tool"
	TypeToolResult  = "tool_result"
	TypeDelegate    = "delegate"
	TypeNoToolCall  = "no_tool_call"
	TypeCompleteRun = "complete_run"
	TypeMaxSteps    = "stop_run_by_max_steps"
	TypeInterrupt   = "stop_run_by_interrupt"
	TypeError       = "stop_run_by_error"
	TypeText        = "text"
)

// Event is one thing that happened in a job.
type Event struct {
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	JobID     string          `json:"job_id"`
	RunID     string          `json:"run_id"`
	Step      int             `json:"step"`
	Model     string          `json:"model,omitempty"`
	Query     string          `json:"query,omitempty"`
	Skill     string          `json:"skill,omitempty"`
	Text      string          `json:"text,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Result    string          `json:"result,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Replayed  bool            `json:"replayed,omitempty"`
	ToolCall  []string        `json:"tool_calls,omitempty"`
	Delegated string          `json:"delegated_run_id,omitempty"`
	Error     string          `json:"error,omitempty"`
	Usage     *Usage          `json:"usage,omitempty"`
	// Checkpoint is the checkpoint a resume started from.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// emit records ev on disk and hands it to OnEvent. A failure to write an
// event is reported but does not stop the run: checkpoints, not events,
// are what a resume needs.
func (r *runner) emit(ev Event) {
	ev.Time = time.Now().UTC()
	ev.JobID = r.job.ID
	if ev.Type != TypeText {
		name := fmt.Sprintf("event-%d-%d-%s.json", r.o.Store.stamp(), ev.Step, ev.Type)
		if err := writeFile(filepath.Join(r.o.Store.runDir(r.job.ID, ev.RunID), name), ev, false); err != nil && r.o.OnEvent != nil {
			r.o.OnEvent(Event{Type: TypeError, Time: ev.Time, JobID: ev.JobID, RunID: ev.RunID, Step: ev.Step, Error: err.Error()})
		}
	}
	if r.o.OnEvent != nil {
		r.o.OnEvent(ev)
	}
}

// argsJSON is args as a JSON value for an event: the object when it is
// one, else the text as a JSON string.
func argsJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
