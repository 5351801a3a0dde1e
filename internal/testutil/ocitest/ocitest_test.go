package ocitest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestStartServesV2(t *testing.T) {
	r := Start(t)
	if !strings.HasPrefix(r.Host, "127.0.0.1:") || strings.HasSuffix(r.Host, ":0") {
		t.Fatalf("Host = %q, want 127.0.0.1 and the port the kernel picked", r.Host)
	}
	resp, err := http.Get("http://" + r.Host + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"repositories"`) {
		t.Fatalf("GET /v2/_catalog = %d %s", resp.StatusCode, body)
	}
}
