package cli

import (
	"errors"
	"strings"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/scaffold"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/signing"
)

// describe turns an error from a library package into the words a user sees:
// what happened, then what to do next. Library errors carry the operation;
// the advice lives here so that wording is decided in one place.
func describe(err error) string {
	msg := err.Error()
	for _, h := range hints {
		if h.match(err) && !strings.Contains(msg, h.advice) {
			return msg + "\n  " + h.advice
		}
	}
	return msg
}

type hint struct {
	match  func(error) bool
	advice string
}

// hints is filled in by init functions: the ones below for the registry,
// the host and the skill commands, others beside the commands that own them.
var hints []hint

// isCobraUsage recognises cobra's own argument errors, which are not typed.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// Errors of the CLI itself. Their advice is below, with the library ones.
var (
	errUntrustedNoTTY = errors.New("the skill is not trusted and there is no terminal to ask on")
	errUpdateNoTTY    = errors.New("confirmation needed and there is no terminal to ask on")
	errRemoveNoTTY    = errors.New("confirmation needed and there is no terminal to ask on")
	errBundledFixed   = errors.New("bundled skills ship inside the agent binary and are always trusted")
)

// isUnless matches target unless the message already contains one of the
// phrases, that is, unless the library already gave that advice.
func isUnless(target error, phrases ...string) func(error) bool {
	return func(err error) bool {
		if !errors.Is(err, target) {
			return false
		}
		msg := err.Error()
		for _, p := range phrases {
			if strings.Contains(msg, p) {
				return false
			}
		}
		return true
	}
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// The advice for each error a user can meet, in the order checked: the first
// match wins, so more specific errors come first.
func init() {
	hints = append(hints,
		hint{is(errUntrustedNoTTY), "pass --trust to install it as trusted, or --yes to install it untrusted"},
		hint{is(errUpdateNoTTY), "pass --yes to update without asking, or --dry-run to only see the change"},
		hint{is(errRemoveNoTTY), "pass --yes to remove it without asking"},
		hint{is(errCanceled), "nothing was changed"},
		hint{is(errBundledFixed), "leave it out of AGENT_SKILLS to disable it; no installed or discovered skill takes its name"},
		hint{is(plugbuild.ErrBuild), "fix the compile errors above in the skill's repository (or ask its author), then run the command again; nothing was installed"},
		hint{is(plugbuild.ErrGoMissing), "this skill's plugin is built from source: install Go from https://go.dev/dl and make sure 'go' is on PATH"},
		hint{is(plugbuild.ErrNoModule), "a Go plugin is a module of its own inside the skill: give its folder a go.mod that requires " + sdkmod.SDKPath + " ('agent skill init --plugin <dir>' writes one)"},
		hint{is(scaffold.ErrNotEmpty), "give a new folder, or an empty one: init never overwrites files"},
		hint{is(registry.ErrLinked), "edit its folder instead: the next call rebuilds it; 'agent skill link <dir>' rebuilds at once"},
		hint{is(plugbuild.ErrBadPath), "the skill's SKILL.md names a plugin that cannot be used; check it with 'agent skill validate <dir>'"},
		hint{is(install.ErrProtocol), "rebuild the plugin against this agent's SDK: a skill with plugin.build is rebuilt by 'agent skill add' or 'update'; for a prebuilt plugin.command ask its author for a build of this protocol"},
		hint{is(install.ErrDescribe), "the plugin must serve the agent SDK (sdk.Serve in its main); run with AGENT_LOG_LEVEL=debug to see its output"},

		hint{is(registry.ErrNotVerified), "a signer you accept covers this source, so it is installed only when signed by one; pass --trust to install and trust it anyway, or --yes to install it untrusted"},
		hint{is(signing.ErrUntrustedSigner), "if you trust that key, accept it with 'agent skill trust --signer KEY.pub' (or signatures.signers in config.yaml); nothing was installed"},
		hint{is(signing.ErrUnsigned), "ask its publisher to sign it (agent skill sign for an OCI artifact, git tag -s or git commit -S for git), or change the signer policy (signatures: in config.yaml, agent skill trust --signer); nothing was installed"},
		hint{is(signing.ErrRelabelled), "a signature vouches for one release: install the name it was signed as, or ask its publisher to sign this one; nothing was installed"},
		hint{is(signing.ErrBadSignature), "the signature names a key you accept but does not match the content: the skill or its signature was changed after signing; nothing was installed"},
		hint{is(signing.ErrKey), "give an ed25519 or ECDSA key: ssh-keygen -t ed25519 makes one (sign with the private key, trust with the .pub)"},
		hint{isUnless(registry.ErrCorrupt, "move it away"), "the file was left untouched: restore it from a backup, or move it away and add your skills again"},
		hint{isUnless(manifest.ErrIncompatible, "upgrade agent", "older agent"), "pick a version of the skill that supports this agent with --version, or upgrade agent"},
		hint{is(manifest.ErrInvalidManifest), "run 'agent skill validate <dir>' on the skill to see every problem"},
		hint{isUnless(manifest.ErrInvalidName, "use 1-"), "skill names use 1-64 letters, digits, '-' or '_'"},
		hint{isUnless(registry.ErrNotFound, "agent skill list"), "'agent skill list' shows what is installed"},
		hint{isUnless(registry.ErrAlreadyInstalled, "another name"), "to keep both, add the second copy under another name with --name"},
		hint{isUnless(gitsrc.ErrUnsupportedSource, "use an https", "use https", "give an https"), "give an https, http, ssh, git or file URL, a local path to a git repository, or owner/repo for GitHub"},
		hint{isUnless(gitsrc.ErrRepoNotFound, "agent skill link"), "for a private repository, check that you have access"},
		hint{is(gitsrc.ErrAuthRequired), "the repository needs credentials: use an ssh URL with a loaded key, or a git credential helper for https"},
		hint{isUnless(gitsrc.ErrUnreachable, "check the network"), "check your network connection and the host name, then try again"},
		hint{isUnless(gitsrc.ErrNoSkill, "a skill needs a SKILL.md", "rename it to SKILL.md"), "name one of the skills found as the [skill] argument: agent skill add <source> <skill>"},
		hint{is(gitsrc.ErrAmbiguousSkill), "name the one you want as the [skill] argument: agent skill add <source> <skill>"},
		hint{isUnless(gitsrc.ErrRefNotFound, "history rewritten"), "check the branch, tag or SHA given with --ref or source@ref"},
		hint{is(gitsrc.ErrNoMatchingVersion), "relax the version constraint, or pick a branch or tag with --ref"},

		hint{is(workspace.ErrPluginTampered), "the plugin binary changed after install and was not run; reinstall the skill with 'agent skill remove <name> --yes' and 'agent skill add'"},
		hint{is(workspace.ErrUnknownPlugin), "the skill is not active; see 'agent tools --help' about AGENT_SKILLS"},
		hint{is(workspace.ErrPluginStart), workspace.StartAdvice},
	)
}
