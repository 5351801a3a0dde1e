package gittest

import (
	"bytes"
	"io"
	"net/http"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
)

// WithholdBlob wraps a smart-HTTP git server so that it never sends the
// object id (a full hex SHA-1): its want line is dropped from every
// upload-pack request, so the server answers with a pack that lacks it,
// as a server that advertises partial clone and then withholds a blob
// would.
func WithholdBlob(h http.Handler, id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if body, err = dropWant(body, id); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
		}
		h.ServeHTTP(w, req)
	})
}

// dropWant removes id's want line from an upload-pack request; the
// capabilities on the first want line move to the next one when it is
// id's.
func dropWant(body []byte, id string) ([]byte, error) {
	var lines [][]byte
	sc := pktline.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := pktline.NewEncoder(&out)
	var caps []byte
	for _, line := range lines {
		if len(line) == 0 {
			if err := enc.Flush(); err != nil {
				return nil, err
			}
			continue
		}
		if bytes.HasPrefix(line, []byte("want "+id)) {
			if rest := bytes.TrimSpace(line[len("want ")+len(id):]); len(rest) > 0 {
				caps = rest
			}
			continue
		}
		if caps != nil && bytes.HasPrefix(line, []byte("want ")) {
			line = append(bytes.TrimSpace(line), append([]byte(" "), append(caps, '\n')...)...)
			caps = nil
		}
		if err := enc.Encode(line); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}
