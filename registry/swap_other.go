//go:build !linux

package registry

import "errors"

func exchange(a, b string) error { return errors.ErrUnsupported }
