package install

import (
	"context"

	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/registry"
)

// Linker is the registry port that link needs: registering a folder in
// place with this Preparer as its Prepare step.
type Linker interface {
	Link(ctx context.Context, req registry.LinkRequest, prep registry.Prepare) (registry.Entry, error)
}

// Link (re)registers the skill folder dir in place (`agent skill link`)
// with the stamp of its current sources.
func (in *Preparer) Link(ctx context.Context, store Linker, dir, agentVersion string, warn func(string)) (registry.Entry, error) {
	stamp, err := plugbuild.Stamp(dir)
	if err != nil {
		return registry.Entry{}, err
	}
	return store.Link(ctx, registry.LinkRequest{Dir: dir, AgentVersion: agentVersion, Stamp: stamp, Warn: warn}, in.Prepare)
}

// Relink brings a linked (dev) skill up to date with its folder: one whose
// sources changed since its last build is built and described again
// before it is used. It is what cmd injects as workspace.Config.Relink.
func (in *Preparer) Relink(ctx context.Context, store Linker, e registry.Entry, agentVersion string) (registry.Entry, error) {
	stamp, err := plugbuild.Stamp(e.Path)
	if err != nil {
		return e, err
	}
	if stamp == e.Stamp {
		return e, nil
	}
	return in.Link(ctx, store, e.Path, agentVersion, nil)
}
