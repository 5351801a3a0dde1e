// Command probe is the plugin the MCP tests install: a tool for each thing
// agent mcp must carry (a plain result, a slow call that notices
// cancellation, a crash, a tool error, image and PDF bytes).
package main

import (
	"context"
	"encoding/base64"
	"os"
	"time"

	"github.com/agentskills/agent/sdk"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
	PID  int    `json:"pid"`
}

type slowIn struct {
	Millis int    `json:"millis"`
	Mark   string `json:"mark,omitempty"` // file written "canceled" when the call is canceled
}

type binary struct {
	MIMEType string `json:"mime_type"`
	Data     string `json:"data"`
}

// PNG is a 1x1 transparent PNG.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82")

// PDF is the start of a PDF file: enough for a MIME sniffer.
var PDF = []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")

func main() {
	sdk.Serve(sdk.NewSkill(
		sdk.NewTool("echo", "Return the text and this plugin's pid.", func(ctx context.Context, in echoIn) (echoOut, error) {
			return echoOut{Text: in.Text, PID: os.Getpid()}, nil
		}),
		sdk.NewTool("slow", "Sleep millis milliseconds; write canceled to mark if canceled first.", func(ctx context.Context, in slowIn) (string, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				return "done", nil
			case <-ctx.Done():
				if in.Mark != "" {
					_ = os.WriteFile(in.Mark, []byte("canceled"), 0o644)
				}
				return "", ctx.Err()
			}
		}),
		sdk.NewTool("crash", "Exit the plugin process mid-call.", func(ctx context.Context, _ struct{}) (string, error) {
			os.Exit(3)
			return "", nil
		}),
		sdk.NewTool("fail", "Fail with the code probe_failed.", func(ctx context.Context, _ struct{}) (string, error) {
			return "", sdk.Errorf("probe_failed", "it failed on purpose")
		}),
		sdk.NewTool("image", "Return a PNG as {mime_type, data}.", func(ctx context.Context, _ struct{}) (binary, error) {
			return binary{MIMEType: "image/png", Data: base64.StdEncoding.EncodeToString(PNG)}, nil
		}),
		sdk.NewTool("pdf", "Return a PDF as {mime_type, data}.", func(ctx context.Context, _ struct{}) (binary, error) {
			return binary{MIMEType: "application/pdf", Data: base64.StdEncoding.EncodeToString(PDF)}, nil
		}),
	))
}
