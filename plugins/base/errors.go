package base

import "github.com/agentskills/agent/sdk"

// Error codes of the base tools (SPEC §14). Each failure is an *sdk.Error
// whose message says what to do next.
const (
	CodePathOutside      = "path_outside_workspace"
	CodeNotFound         = "not_found"
	CodeNotText          = "not_a_text_file"
	CodeNoMatch          = "no_match"
	CodeAmbiguous        = "ambiguous_match"
	CodeTooLarge         = "too_large"
	CodeTimeout          = sdk.CodeTimeout
	CodeExecutionFailed  = "execution_failed"
	CodePermissionDenied = "permission_denied"
	CodeInvalidArgs      = sdk.CodeInvalidArgs
)

func errorf(code, format string, a ...any) *sdk.Error { return sdk.Errorf(code, format, a...) }
