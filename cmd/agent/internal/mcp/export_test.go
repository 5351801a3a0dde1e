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

// ViaSDK makes s answer every tools/call through go-sdk's dispatch, as it
// did before directCalls; call it before serving.
func (s *Server) ViaSDK() { s.viaSDK = true }

// DirectCalls is how many tools/call s answered without go-sdk.
func (s *Server) DirectCalls() int64 { return s.direct.Load() }
