// Command gen writes cl100k_base.bpe from the cl100k_base.tiktoken file that
// github.com/pkoukk/tiktoken-go-loader embeds. Run it with `go generate`
// in the parent directory.
package main

import (
	"log"
	"os"

	"github.com/agentskills/agent/internal/disclosure/internal/bpe"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

func main() {
	src, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		log.Fatal(err)
	}
	out, err := bpe.Build(src)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("cl100k_base.bpe", out, 0o644); err != nil {
		log.Fatal(err)
	}
}
