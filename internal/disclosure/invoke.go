package disclosure

import (
	"errors"
	"fmt"
)

// Invoker is who asks for a skill's instructions.
type Invoker int

const (
	// Person is someone running `agent skill show`.
	Person Invoker = iota
	// Model is an agent calling the use_skill tool.
	Model
)

func (i Invoker) String() string {
	if i == Model {
		return "the model"
	}
	return "a person"
}

// Sentinel errors of the trigger matrix.
var (
	ErrModelInvocationDisabled = errors.New("skill may not be invoked by the model")
	ErrNotUserInvocable        = errors.New("skill may not be invoked by a person")
)

// Triggers are a skill's invocation fields.
type Triggers struct {
	DisableModelInvocation bool // disable-model-invocation: true → only a person
	UserInvocable          bool // user-invocable: false → only the model (default true)
}

// Check applies the trigger matrix of Claude Code skills:
//
//	                                    person   model
//	default                              yes      yes
//	disable-model-invocation: true       yes      no
//	user-invocable: false                no       yes
//	both                                 no       no
func Check(skill string, t Triggers, by Invoker) error {
	switch {
	case by == Model && t.DisableModelInvocation:
		return fmt.Errorf("%w: %s sets disable-model-invocation: true, so only a person can use it (agent skill show %s)", ErrModelInvocationDisabled, skill, skill)
	case by == Person && !t.UserInvocable:
		return fmt.Errorf("%w: %s sets user-invocable: false, so only the model can load it through the use_skill tool", ErrNotUserInvocable, skill)
	}
	return nil
}
