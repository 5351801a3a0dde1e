package exec

import "github.com/agentskills/agent/sdk"

// errorf is sdk.Errorf under a shorter name: every tool failure leaves the
// plugin as an *sdk.Error carrying one of the codes above.
func errorf(code, format string, a ...any) *sdk.Error { return sdk.Errorf(code, format, a...) }

// CodeInvalidArgs is the sdk's code for malformed input, used here for a NUL
// byte in an argument or an environment value.
const CodeInvalidArgs = sdk.CodeInvalidArgs
