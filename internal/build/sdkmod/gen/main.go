// Command gen writes the module zips and the version that package sdkmod
// embeds, from the repository's sdk/ and proto/, and pins the example
// plugin modules and go.work to that version (make generate).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/internal/build/sdkmod"
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
		if err := os.WriteFile(filepath.Join(*root, "internal", "build", "sdkmod", name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "sdkmod/gen:", err)
			os.Exit(1)
		}
	}
	if err := sdkmod.Pin(*root, b); err != nil {
		fmt.Fprintln(os.Stderr, "sdkmod/gen:", err)
		os.Exit(1)
	}
	fmt.Println("sdkmod:", b.Version)
}
