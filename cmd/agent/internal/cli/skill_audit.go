package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentskills/agent/internal/app/audit"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/ground/parallel"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

// AuditConfig is audit: in config.yaml.
type AuditConfig struct {
	// FailOn is the severity at which add and trust refuse a skill
	// (default critical; none never refuses).
	FailOn audit.Severity
	// Rules are more rule files or folders, after
	// $AGENT_HOME/audit/rules/.
	Rules []string
	// Disable lists rule ids to drop.
	Disable []string
}

// readAuditConfig reads audit.fail_on, audit.rules and audit.disable.
func readAuditConfig(v *viper.Viper, cfg *Config, path string) error {
	cfg.Audit = AuditConfig{FailOn: audit.SeverityCritical, Rules: v.GetStringSlice("audit.rules"), Disable: v.GetStringSlice("audit.disable")}
	if s := v.GetString("audit.fail_on"); s != "" {
		sev, err := audit.ParseSeverity(s)
		if err != nil {
			return fmt.Errorf("read audit.fail_on in %s: %w", path, err)
		}
		cfg.Audit.FailOn = sev
	}
	for i, p := range cfg.Audit.Rules {
		if !filepath.IsAbs(p) {
			// Relative to the configuration file, as a reader expects.
			cfg.Audit.Rules[i] = filepath.Join(cfg.Home, p)
		}
	}
	return nil
}

// auditRules loads the built-in rules and the user's: the folder
// $AGENT_HOME/audit/rules/, then audit.rules; audit.disable drops some.
func auditRules(cfg *Config) (*audit.Rules, error) {
	paths := append([]string{filepath.Join(cfg.Home, "audit", "rules")}, cfg.Audit.Rules...)
	if len(cfg.Audit.Disable) == 0 && len(cfg.Audit.Rules) == 0 {
		if _, err := os.Stat(paths[0]); errors.Is(err, fs.ErrNotExist) {
			return audit.Builtin()
		}
	}
	return audit.Load(audit.LoadOptions{Paths: paths, Disable: cfg.Audit.Disable})
}

type auditOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Config    func() (*Config, error)
	Discovery func() workspace.Discovery

	Target  string
	Skills  []string
	JSON    bool
	SARIF   string
	FailOn  string
	Ref     string
	Version string
}

func newCmdAudit(f *Factory, runF func(context.Context, *auditOptions) error) *cobra.Command {
	opts := &auditOptions{IO: f.IO, Store: f.Store, Config: f.Config, Discovery: f.discovery}
	cmd := &cobra.Command{
		Use:   "audit <name|dir|source> [skill...]",
		Short: "Read a skill for hidden text, secret grabs, fetched code and undeclared reach",
		Long: dedent(`
			Read every file of a skill and report what the sandbox cannot stop:
			hidden text (zero-width, bidirectional and tag characters, look-alike
			letters in names and headings, HTML comments, collapsed blocks),
			instructions that reach for secrets or send data away, code that
			downloads and runs more code or hides it (base64, packed JS),
			hard-coded secrets, and URLs or paths the manifest's permissions do
			not declare. Each finding gives the file, the line, the rule, its
			severity and the fix; the rule pack's version is printed with it.

			<name> is an installed or discovered skill (its last audit is kept
			and 'agent skill info' shows it), <dir> a skill folder, and
			<source> anything 'agent skill add' takes: it is fetched as add
			fetches it, and nothing is installed, built or run. [skill...]
			picks skills of a source holding several; without, all are read.

			Nothing goes over the network but the fetch of a source. Rules are
			YAML files: the built-in ones, then $AGENT_HOME/audit/rules/*.yaml
			and audit.rules in config.yaml (a rule with a built-in id replaces
			it; disabled: true or audit.disable drops it).

			add and trust run the same audit, print its summary, and refuse a
			skill with a finding at or above audit.fail_on (default critical)
			unless you name it: add --trust=NAME, trust --accept-findings.

			Guide: docs/audit.md.
		`),
		Example: dedent(`
			$ agent skill audit weather
			$ agent skill audit ./my-skill --fail-on high
			$ agent skill audit anthropics/skills pdf --json
			$ agent skill audit ./my-skill --sarif audit.sarif
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr(fmt.Errorf("%s needs <name|dir|source>; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target, opts.Skills = args[0], args[1:]
			if _, err := audit.ParseSeverity(opts.FailOn); err != nil {
				return usageErr(fmt.Errorf("--fail-on: %w", err))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return auditRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&opts.SARIF, "sarif", "", "also write a SARIF 2.1.0 log to `FILE`")
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "", "exit 1 when a finding is at or above `SEVERITY` (info, low, medium, high, critical)")
	cmd.Flags().StringVar(&opts.Ref, "ref", "", "for a source: this branch, tag or commit `SHA`")
	cmd.Flags().StringVar(&opts.Version, "version", "", "for a source: the highest tag matching this semver `constraint`")
	return cmd
}

var errAuditFindings = errors.New("findings at or above the --fail-on severity")

func auditRun(ctx context.Context, opts *auditOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	rules, err := auditRules(cfg)
	if err != nil {
		return err
	}
	failOn, _ := audit.ParseSeverity(opts.FailOn)
	reports, err := auditTargets(ctx, opts, cfg, rules)
	if err != nil {
		return err
	}
	if opts.SARIF != "" {
		if err := writeSARIFFile(opts.SARIF, rules, reports); err != nil {
			return err
		}
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, reports); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			if err := audit.WriteText(opts.IO.Out, r); err != nil {
				return err
			}
		}
	}
	if failOn == audit.SeverityNone {
		return nil
	}
	for _, r := range reports {
		if r.Max() >= failOn {
			return fmt.Errorf("%s has %w (%s)", r.Skill, errAuditFindings, failOn)
		}
	}
	return nil
}

func writeSARIFFile(path string, rules *audit.Rules, reports []*audit.Report) error {
	var b strings.Builder
	if err := audit.WriteSARIF(&b, rules, reports, Version); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write the SARIF log: %w", err)
	}
	return nil
}

// auditTargets reads what Target names: a skill folder given as a path,
// an installed or discovered skill, a folder, or a source to fetch.
func auditTargets(ctx context.Context, opts *auditOptions, cfg *Config, rules *audit.Rules) ([]*audit.Report, error) {
	t := opts.Target
	looksLikePath := strings.HasPrefix(t, ".") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~")
	if looksLikePath {
		if r, ok, err := auditDir(t, rules); ok || err != nil {
			return []*audit.Report{r}, err
		}
	}
	store, err := opts.Store()
	if err != nil {
		return nil, err
	}
	if _, cerr := manifest.Canonical(t); cerr == nil && !looksLikePath && len(opts.Skills) == 0 {
		e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), t)
		switch {
		case err == nil && e.Path != "":
			m, _, err := workspace.LoadManifest(e)
			if err != nil {
				return nil, err
			}
			r, err := rules.Audit(os.DirFS(e.Path), m)
			if err != nil {
				return nil, err
			}
			r.Skill, r.Source = e.Canonical, e.URL
			if e.Source != "bundled" {
				if err := audit.Save(cfg.Home, e.Canonical, r); err != nil {
					return nil, err
				}
			}
			return []*audit.Report{r}, nil
		case err == nil:
			return nil, fmt.Errorf("%s ships inside the agent binary: there are no files to audit", e.Canonical)
		case !errors.Is(err, registry.ErrNotFound):
			return nil, err
		}
		if r, ok, err := auditDir(t, rules); ok || err != nil {
			return []*audit.Report{r}, err
		}
	}
	src, err := sourceFromArgs(t, opts.Ref, opts.Version)
	if err != nil {
		return nil, err
	}
	skills := opts.Skills
	if src.Skill != "" {
		skills = append([]string{src.Skill}, skills...)
	}
	var out []*audit.Report
	err = registry.NewPipeline(store).Inspect(ctx, src, skills, opts.IO.Progress(), func(rs []registry.Reviewed) error {
		for _, rv := range rs {
			r, err := rules.Audit(rv.FS, rv.Manifest)
			if err != nil {
				return err
			}
			r.Skill, r.Source = rv.Canonical, src.Raw
			if rv.Path != "" && rv.Path != "." {
				r.Source += " (" + rv.Path + ")"
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// auditDir audits the skill folder dir; ok is false when dir is not a
// folder holding a SKILL.md.
func auditDir(dir string, rules *audit.Rules) (*audit.Report, bool, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, false, nil
	}
	if _, err := os.Stat(gitsrc.ManifestPath(dir)); err != nil {
		return nil, false, nil
	}
	m, _, err := gitsrc.LoadManifest(dir)
	if err != nil {
		return nil, true, err
	}
	r, err := rules.Audit(os.DirFS(dir), m)
	if err != nil {
		return nil, true, err
	}
	if r.Skill == "" {
		r.Skill = filepath.Base(dir)
	}
	r.Source = dir
	return r, true, nil
}

// writeAuditSummary says, before add or trust asks, what the audit found:
// the counts and the most severe findings.
func writeAuditSummary(w io.Writer, r *audit.Report) {
	fmt.Fprintf(w, "  audit: %s (rules %s %s)\n", r.Summary(), r.Pack.Name, r.Pack.Version)
	const show = 5
	for i, f := range r.Findings {
		if i == show {
			fmt.Fprintf(w, "    ... and %d more: 'agent skill audit' lists them all\n", len(r.Findings)-show)
			break
		}
		fmt.Fprintf(w, "    %s:%d: %s %s: %s\n", audit.Escape(f.File, 120), f.Line, f.Rule, strings.ToUpper(f.Severity.String()), audit.Escape(f.Message, 160))
	}
}

// auditOnAdd is a seam for the benchmarks that measure add with and
// without the audit: BenchmarkAddAudit sets it in process, and
// BenchmarkAddAuditCLI links a second binary with
// -ldflags=-X=...cli.auditOnAdd=off. Nothing else changes it.
var auditOnAdd = "on"

// errAuditRefused is an add or trust refused for its audit.
var errAuditRefused = errors.New("refused for its audit findings")

// auditGate audits each skill add or trust is about to take, prints the
// summary, and refuses one with a finding at or above audit.fail_on
// unless the user named it (add --trust=NAME, trust --accept-findings).
type auditGate struct {
	w       io.Writer
	rules   func() (*audit.Rules, error)
	failOn  audit.Severity
	allow   []string
	how     string // what lets the user take it anyway, %s is the name
	reports map[string]*audit.Report
}

func newAuditGate(cfg *Config, w io.Writer, allow []string, how string) *auditGate {
	// The rules load while add fetches: on the second core, the 2 ms of
	// parsing them leave add's time (issue 39: within 1.1x of add without
	// the audit). A bad user rule still stops add before anything is
	// written: check waits for the load and returns its error.
	rules := sync.OnceValues(func() (*audit.Rules, error) { return auditRules(cfg) })
	go func() {
		rules()
		// The reports' folder too: creating it was most of saving one
		// (1.3 of 2 ms). An empty folder is all an add that fails leaves.
		_ = os.MkdirAll(audit.StateDir(cfg.Home), 0o700)
	}()
	var canon []string
	for _, a := range allow {
		if c, err := manifest.Canonical(a); err == nil {
			canon = append(canon, c)
		}
	}
	return &auditGate{w: w, rules: rules, failOn: cfg.Audit.FailOn, allow: canon, how: how, reports: map[string]*audit.Report{}}
}

// check audits one skill's files.
func (g *auditGate) check(canonical, source string, fsys fs.FS, m *manifest.Manifest) error {
	rules, err := g.rules()
	if err != nil {
		return err
	}
	r, err := rules.Audit(fsys, m)
	if err != nil {
		return err
	}
	return g.judge(canonical, source, r)
}

// judge records r, prints its summary and applies the policy.
func (g *auditGate) judge(canonical, source string, r *audit.Report) error {
	r.Skill, r.Source = canonical, source
	g.reports[canonical] = r
	fmt.Fprintf(g.w, "Audit of %s:\n", canonical)
	writeAuditSummary(g.w, r)
	if g.failOn == audit.SeverityNone || r.Max() < g.failOn || slices.Contains(g.allow, canonical) {
		return nil
	}
	return fmt.Errorf("%s: %w: %d finding(s) at or above %s (audit.fail_on); read them with 'agent skill audit', then %s",
		canonical, errAuditRefused, r.Count(g.failOn), g.failOn, fmt.Sprintf(g.how, canonical))
}

// review is a registry.AddRequest Review step: it audits every selected
// skill, then hands them to next (nil: none).
func (g *auditGate) review(source string, next func([]registry.Reviewed) error) func([]registry.Reviewed) error {
	if auditOnAdd == "off" {
		return next
	}
	return func(rs []registry.Reviewed) error {
		reports, errs, err := g.auditAll(rs)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if errs[i] == nil {
				errs[i] = g.judge(r.Canonical, source, reports[i])
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(rs)
	}
}

// auditAll audits rs on every core (add --all of a large repository
// reads and scans every file of every skill) and returns each one's
// report or error, in order; err is the rules' own.
func (g *auditGate) auditAll(rs []registry.Reviewed) (reports []*audit.Report, errs []error, err error) {
	rules, err := g.rules()
	if err != nil {
		return nil, nil, err
	}
	reports, errs = make([]*audit.Report, len(rs)), make([]error, len(rs))
	parallel.For(len(rs), 0, func(i int) { reports[i], errs[i] = rules.Audit(rs[i].FS, rs[i].Manifest) })
	return reports, errs, nil
}

// save records the audits of the skills installed.
func (g *auditGate) save(home string, entries []registry.Entry) error {
	errs := make([]error, len(entries))
	parallel.For(len(entries), 0, func(i int) {
		if r := g.reports[entries[i].Canonical]; r != nil {
			errs[i] = audit.Save(home, entries[i].Canonical, r)
		}
	})
	return errors.Join(errs...)
}

// trustFlag is add's --trust: bare, it trusts what is added; --trust=NAME
// (repeatable, or comma-separated) also takes NAME despite audit findings
// at or above audit.fail_on.
type trustFlag struct {
	on    *bool
	names *[]string
}

func (t trustFlag) String() string {
	if t.on == nil || !*t.on {
		return "false"
	}
	return "true"
}

func (t trustFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		*t.on = true
	case "false", "0", "no":
		*t.on = false
	default:
		*t.on = true
		for n := range strings.SplitSeq(s, ",") {
			if n = strings.TrimSpace(n); n != "" {
				*t.names = append(*t.names, n)
			}
		}
	}
	return nil
}

// Type is bool so that help shows a bare --trust.
func (t trustFlag) Type() string { return "bool" }

func init() {
	hints = append(hints,
		hint{is(errAuditFindings), "read the findings above; 'agent skill audit --help' says what each family means"},
	)
}
