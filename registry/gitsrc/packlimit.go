package gitsrc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// sizeCheckedStorer is a cache repository's storage whose fetched packs
// are checked while they stream in: go-git's pack parser holds each object
// whole in memory while it indexes the pack, so a 1 GiB file of zeros (a
// megabyte on the wire) would cost a gigabyte. An object whose declared
// size is over max stops the fetch with ErrTooLarge before it is inflated.
type sizeCheckedStorer struct {
	storage.Storer
	max int64
}

// PackfileWriter implements storer.PackfileWriter.
func (s sizeCheckedStorer) PackfileWriter() (io.WriteCloser, error) {
	pw, ok := s.Storer.(storer.PackfileWriter)
	if !ok {
		return nil, fmt.Errorf("the cache storage cannot write packs")
	}
	dst, err := pw.PackfileWriter()
	if err != nil {
		return nil, err
	}
	r, w := io.Pipe()
	c := &checkedPack{dst: dst, pipe: w, done: make(chan error, 1)}
	go func() {
		err := checkPack(r, s.max)
		r.CloseWithError(err) // a later Write fails with err
		if err == nil {
			_, _ = io.Copy(io.Discard, r) // what follows the pack
		}
		c.done <- err
	}()
	return c, nil
}

// checkedPack tees a fetched pack to the checker and to the real writer.
type checkedPack struct {
	dst  io.WriteCloser
	pipe *io.PipeWriter
	done chan error
}

func (c *checkedPack) Write(p []byte) (int, error) {
	if _, err := c.pipe.Write(p); err != nil {
		return 0, err
	}
	return c.dst.Write(p)
}

func (c *checkedPack) Close() error {
	c.pipe.Close()
	err := <-c.done
	if cerr := c.dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkPack reads a pack stream's object headers and refuses an object
// over max bytes: a whole object by its header, a delta by the size of
// the object it makes (the second number of its data).
func checkPack(r io.Reader, max int64) error {
	sc := packfile.NewScanner(r)
	_, count, err := sc.Header()
	if err != nil {
		return err
	}
	for range count {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return err
		}
		if h.Length > max {
			return tooLargeObject(h.Length, max)
		}
		if h.Type != plumbing.OFSDeltaObject && h.Type != plumbing.REFDeltaObject {
			if _, _, err := sc.NextObject(io.Discard); err != nil {
				return err
			}
			continue
		}
		head := &prefix{n: 2 * binary.MaxVarintLen64}
		if _, _, err := sc.NextObject(head); err != nil {
			return err
		}
		br := bytes.NewReader(head.b)
		if _, err := binary.ReadUvarint(br); err != nil { // the base's size
			return fmt.Errorf("read a delta in the pack: %w", err)
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("read a delta in the pack: %w", err)
		}
		if size > uint64(max) {
			return tooLargeObject(int64(min(size, 1<<62)), max)
		}
	}
	return nil
}

func tooLargeObject(size, max int64) error {
	return fmt.Errorf("%w: the repository holds a file of %d bytes, over the limit of %d bytes per file; raise max_file_size in config.yaml if the skill needs it", ErrTooLarge, size, max)
}

// prefix keeps the first n bytes written to it and discards the rest.
type prefix struct {
	b []byte
	n int
}

func (p *prefix) Write(b []byte) (int, error) {
	if k := p.n - len(p.b); k > 0 {
		p.b = append(p.b, b[:min(k, len(b))]...)
	}
	return len(b), nil
}
