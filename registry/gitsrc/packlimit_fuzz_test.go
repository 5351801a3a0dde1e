package gitsrc

import (
	"bytes"
	"testing"
)

// FuzzCheckPack feeds checkPack arbitrary streams: it returns an error
// or nil, and never panics or hangs.
func FuzzCheckPack(f *testing.F) {
	f.Add([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\x30\x78\x9c\x03\x00\x00\x00\x00\x01"))
	f.Add([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\xbf\xff\xff\xff\x0f"))
	f.Add([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\x70" + string(make([]byte, 20))))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = checkPack(bytes.NewReader(data), 1<<10)
	})
}
