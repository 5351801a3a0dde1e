// Command gen writes the module zips and the version that package sdkmod
// embeds, from the repository's sdk/ and proto/ (make generate).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentskills/agent/internal/sdkmod"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	b, err := sdkmod.Build(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkmod/gen:", err)
		os.Exit(1)
	}
	for name, data := range map[string][]byte{
		"sdk.zip":     b.SDKZip,
		"proto.zip":   b.ProtoZip,
		"version.txt": []byte(b.Version + "\n"),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "sdkmod/gen:", err)
			os.Exit(1)
		}
	}
	fmt.Println("sdkmod:", b.Version)
}
