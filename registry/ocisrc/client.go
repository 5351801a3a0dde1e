package ocisrc

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Client talks to OCI registries. The zero value reads credentials from
// the Docker configuration ($DOCKER_CONFIG/config.json or
// ~/.docker/config.json) the first time it needs them.
type Client struct {
	// Credentials, when set, replaces the Docker configuration.
	Credentials credentials.Store
	// HTTP is the client requests go through; nil is oras-go's retrying
	// client.
	HTTP *http.Client
	// Concurrency bounds the blobs moved at once; 0 is 4.
	Concurrency int

	once  sync.Once
	creds credentials.Store
	err   error
	cache auth.Cache
}

func (c *Client) credentials() (credentials.Store, error) {
	c.once.Do(func() {
		c.cache = auth.NewCache()
		if c.Credentials != nil {
			c.creds = c.Credentials
			return
		}
		s, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			c.err = fmt.Errorf("read the Docker credentials configuration ($DOCKER_CONFIG/config.json or ~/.docker/config.json): %w; fix or remove it", err)
			return
		}
		c.creds = s
	})
	return c.creds, c.err
}

func (c *Client) concurrency() int {
	if c.Concurrency > 0 {
		return c.Concurrency
	}
	return 4
}

// repository is the remote repository of ref, over HTTPS unless its host
// is loopback.
func (c *Client) repository(ref Reference) (*remote.Repository, error) {
	creds, err := c.credentials()
	if err != nil {
		return nil, err
	}
	base := c.HTTP
	if base == nil {
		base = retry.DefaultClient
	}
	return &remote.Repository{
		Client: &auth.Client{
			Client:     base,
			Cache:      c.cache,
			Credential: credentials.Credential(creds),
			Header:     http.Header{"User-Agent": {"agent-skill"}},
		},
		Reference: registry.Reference{Registry: ref.Host, Repository: ref.Repository},
		PlainHTTP: Loopback(ref.Host),
		// A registry that sends more is not a skill registry.
		TagListMaxPages:      100,
		ReferrerListMaxPages: 100,
	}, nil
}

// classify maps oras-go and registry errors to the package sentinels,
// keeping their text.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var ec *errcode.ErrorResponse
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("%s: %w: %v", op, ErrNotFound, err)
	case errors.As(err, &ec) && ec.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %w: %v", op, ErrNotFound, err)
	case errors.As(err, &ec) && (ec.StatusCode == http.StatusUnauthorized || ec.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%s: %v; log in with docker login (or write the registry's credentials to the Docker configuration)", op, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
