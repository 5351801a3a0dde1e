//go:build !linux || portable

package cgroup

import (
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// Parent is a cgroup directory; there is none on this system.
type Parent struct{}

// Group is one cgroup; there is none on this system.
type Group struct{}

var errNone = fmt.Errorf("%w: cgroups are a Linux feature (this build: %s, portable tag or not Linux)", ErrUnavailable, runtime.GOOS)

func Detect() (string, error)                { return "", errNone }
func Local() (*Parent, error)                { return nil, errNone }
func Shared() (*Parent, error)               { return nil, errNone }
func WatcherPID() int                        { return 0 }
func (p *Parent) Dir() string                { return "" }
func (p *Parent) New(string) (*Group, error) { return nil, errNone }
func (g *Group) Dir() string                 { return "" }
func (g *Group) Attach(*syscall.SysProcAttr) {}
func (g *Group) Kill() error                 { return nil }
func (g *Group) Populated() bool             { return false }
func (g *Group) Procs() []int                { return nil }
func (g *Group) Members() []int              { return nil }
func (g *Group) Close(time.Duration) error   { return nil }
