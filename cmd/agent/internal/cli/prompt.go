package cli

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
)

type promptOptions struct {
	IO        *IOStreams
	Workspace func(context.Context) (*workspace.Workspace, error)
	Tokenizer disclosure.Tokenizer

	Budget        int
	ContextWindow int
	JSON          bool
}

func newCmdPrompt(f *Factory, runF func(context.Context, *promptOptions) error) *cobra.Command {
	opts := &promptOptions{IO: f.IO, Workspace: f.loadRecordedWorkspace, Tokenizer: disclosure.DefaultTokenizer()}
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the Layer 1 text a model always sees, and its token count",
		Long: dedent(fmt.Sprintf(`
			Print Layer 1 of progressive disclosure: the descriptions of the
			generic tools (use_skill, plus script_list, script_help and script_run
			when an active skill has scripts) and one line per active skill with
			its name and description. Skills with disable-model-invocation: true
			are left out: only a person can use them. Of each active skill only
			SKILL.md is opened, and only its front matter reaches the text: no
			script, no reference, not the body (that is Layer 2, 'agent skill
			show').

			The text must fit a budget in characters. By default it is %d.
			--context-window N (tokens) sets it to 2%% of the window at %d
			characters per token: N × 0.02 × %d, so a 200,000-token window gives
			16,000 characters. --budget N sets it in characters directly. A skill
			whose line would go past the budget is dropped with a warning on
			stderr; later, shorter skills may still fit. The tools are always kept.

			The text goes to stdout; its size and token count go to stderr.
			Tokens are counted exactly with the cl100k_base byte-pair encoding
			(the same ranks and splitting as tiktoken), not estimated.
			--json prints {"text", "chars", "tokens", "budget", "encoding",
			"skills", "dropped"} instead.
		`, disclosure.DefaultBudget, disclosure.CharsPerToken, disclosure.CharsPerToken)),
		Example: dedent(`
			$ AGENT_SKILLS=all agent prompt
			$ AGENT_SKILLS=all agent prompt --context-window 128000 --json | jq .tokens
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("budget") && cmd.Flags().Changed("context-window") {
				return usageErr(fmt.Errorf("give --budget or --context-window, not both; see '%s --help'", cmd.CommandPath()))
			}
			if cmd.Flags().Changed("budget") && opts.Budget <= 0 {
				return usageErr(fmt.Errorf("--budget must be a positive number of characters, got %d", opts.Budget))
			}
			if cmd.Flags().Changed("context-window") && opts.ContextWindow <= 0 {
				return usageErr(fmt.Errorf("--context-window must be a positive number of tokens, got %d", opts.ContextWindow))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return promptRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Budget, "budget", 0, fmt.Sprintf("budget in characters (default %d)", disclosure.DefaultBudget))
	cmd.Flags().IntVar(&opts.ContextWindow, "context-window", 0, "model context window in tokens; the budget is 2% of it")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

type promptJSON struct {
	Text     string   `json:"text"`
	Chars    int      `json:"chars"`
	Tokens   int      `json:"tokens"`
	Budget   int      `json:"budget"`
	Encoding string   `json:"encoding"`
	Skills   []string `json:"skills"`
	Dropped  []string `json:"dropped"`
}

func promptRun(ctx context.Context, opts *promptOptions) error {
	shortLived()
	ws, err := opts.Workspace(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	budget := opts.Budget
	if budget <= 0 {
		budget = disclosure.BudgetFor(opts.ContextWindow)
	}
	text, included, dropped, err := ws.Layer1(budget)
	if err != nil {
		return err
	}
	ws.PrintWarnings(opts.IO.ErrOut)
	if len(dropped) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %d skill(s) left out of the prompt, over the budget of %d characters: %s; raise --budget or --context-window, or activate fewer skills\n",
			len(dropped), budget, someNames(dropped, maxNamesShown))
	}
	tokens := opts.Tokenizer.Count(text)
	chars := utf8.RuneCountInString(text)
	if opts.JSON {
		return writeJSON(opts.IO.Out, promptJSON{
			Text: text, Chars: chars, Tokens: tokens, Budget: budget, Encoding: "cl100k_base",
			Skills: orEmpty(included), Dropped: orEmpty(dropped),
		})
	}
	if text == "" {
		fmt.Fprintln(opts.IO.ErrOut, "no active skills, so the prompt is empty; see 'agent check'")
	}
	// The text is for a model; shown to a person, what a terminal would
	// obey in a description is escaped (--json has it as it is).
	if _, err := fmt.Fprint(opts.IO.Out, workspace.EscapeTerminal(text)); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "%d tokens (cl100k_base), %d of %d characters, %d skill(s)", tokens, chars, budget, len(included))
	if len(dropped) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, ", %d dropped", len(dropped))
	}
	fmt.Fprintln(opts.IO.ErrOut)
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// maxNamesShown is how many names a warning lists before "and N more": with
// a thousand skills active, a prompt's warning named 881 of them.
const maxNamesShown = 10

// someNames lists the first max names, and how many more there are and
// where they all are (--json).
func someNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more (--json lists them all)", strings.Join(names[:max], ", "), len(names)-max)
}
