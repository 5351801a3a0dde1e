package cli

import "github.com/spf13/cobra"

// addSkillCommands registers the `agent skill` subcommands.
func addSkillCommands(skill *cobra.Command, f *Factory) {
	skill.AddCommand(
		newCmdAdd(f, nil),
		newCmdUpdate(f, nil),
		newCmdRemove(f, nil),
		holdsGC(newCmdList(f, nil)),
		newCmdInfo(f, nil),
		newCmdTrust(f, true, nil),
		newCmdTrust(f, false, nil),
		newCmdValidate(f, nil),
		newCmdVerify(f, nil),
		newCmdInit(f, nil),
		newCmdLink(f, nil),
		newCmdLock(f, nil),
		newCmdSync(f, nil),
		newCmdRollback(f, nil),
		newCmdAgents(f, nil),
		newCmdPublish(f, nil),
		newCmdMirror(f, nil),
		newCmdSign(f, nil),
		newCmdSearch(f, nil),
		newCmdAudit(f, nil),
		newCmdSkillTest(f, nil),
	)
}

// addToolCommands registers tools, call, mcp, run, trace and the hidden
// __plugin command.
func addToolCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(
		holdsGC(newCmdTools(f, nil)),
		newCmdCall(f, nil),
		newCmdPlugin(f, nil),
		newCmdMCP(f, nil),
		newCmdRun(f, nil),
		newCmdTrace(f, nil),
		newCmdCatalog(f),
	)
}
