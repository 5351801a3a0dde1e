package procgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysGroup on Windows: a Job Object with kill-on-close. Every process the
// child starts is in the job too (no breakaway), and when the last handle
// to the job closes, ours included when this process dies, Windows ends
// them all. os/exec cannot start a process inside a job, so the child
// starts suspended, is assigned to the job, and only then resumed: it runs
// nothing outside the job.
type sysGroup struct{ job windows.Handle }

func (s *sysGroup) prepare(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return fmt.Errorf("set job object kill-on-close: %w", err)
	}
	s.job = job
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP
	return nil
}

func (s *sysGroup) started(cmd *exec.Cmd) error {
	pid := uint32(cmd.Process.Pid)
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return fmt.Errorf("open started process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(s.job, h); err != nil {
		return fmt.Errorf("assign process to job object: %w", err)
	}
	return resume(pid)
}

// resume resumes the threads of pid, started suspended: one, its main
// thread (os/exec does not keep the thread handle CreateProcess returns).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	n := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, oerr := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if oerr != nil {
			return fmt.Errorf("open thread: %w", oerr)
		}
		_, rerr := windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if rerr != nil {
			return fmt.Errorf("resume thread: %w", rerr)
		}
		n++
	}
	if n == 0 {
		return errors.New("resume started process: no thread found")
	}
	return nil
}

func (s *sysGroup) kill(int) {
	if s.job != 0 {
		_ = windows.TerminateJobObject(s.job, 1)
	}
}

// stop: Windows has no SIGTERM to send; the job ends the leader and all
// it started at once.
func (s *sysGroup) stop(pid int) { s.kill(pid) }

// waitExit: the job, not a pid, names the group, so killing it after the
// reap is safe.
func (s *sysGroup) waitExit(int) bool { return false }

func (s *sysGroup) release() {
	if s.job != 0 {
		_ = windows.CloseHandle(s.job)
		s.job = 0
	}
}

// onParentExit: the host holds the job this process runs in, with
// kill-on-close, so the host's death ends this process.
func onParentExit(int, chan<- os.Signal) {}

// Protections names what holds a started command's processes together
// here, for agent check.
func Protections() []string { return []string{"job object (kill-on-close)"} }

// UseSession: cgroup sessions are a Linux feature; nothing to do here.
func UseSession() {}
