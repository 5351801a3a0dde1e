package ocisrc

import (
	"context"
	"fmt"
	"strings"

	"oras.land/oras-go/v2/registry/remote"
)

// maxCatalogRepos bounds the repositories Repositories returns: a registry
// that lists more is not one team's skill registry.
const maxCatalogRepos = 10000

// Repositories lists the repositories of the registry at host (the
// registry's catalog API, /v2/_catalog) whose names start with prefix
// ("" for all). Plain HTTP only on loopback, credentials as for a pull.
func (c *Client) Repositories(ctx context.Context, host, prefix string) ([]string, error) {
	op := "list the repositories of " + Scheme + host
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", op, ErrReference, err)
	}
	// The client (credentials, retries, auth cache) of any repository
	// on host is the registry's.
	repo, err := c.repository(Reference{Host: host, Repository: "catalog"})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	reg.Client = repo.Client
	reg.PlainHTTP = Loopback(host)
	var out []string
	err = reg.Repositories(ctx, "", func(repos []string) error {
		for _, r := range repos {
			if strings.HasPrefix(r, prefix) {
				out = append(out, r)
			}
		}
		if len(out) > maxCatalogRepos {
			return fmt.Errorf("%w: more than %d repositories", ErrTooLarge, maxCatalogRepos)
		}
		return nil
	})
	if err != nil {
		return nil, classify(op, err)
	}
	return out, nil
}
