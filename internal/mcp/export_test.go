package mcp

import (
	"io"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// LineTransport is the stdio transport of ServeStdio over r and w, for
// benchmarks that compare it with go-sdk's IOTransport.
func LineTransport(r io.ReadCloser, w io.Writer) sdkmcp.Transport {
	return &lineTransport{r: r, w: w}
}
