// Command fakemodel serves a scripted model on loopback for examples/demo.sh:
// it answers `agent run` with the replies of a JSON script, in the wire
// formats of Anthropic Messages and OpenAI Chat Completions. It is a
// stand-in for a real model in a demo, not part of the agent binary.
//
//	fakemodel SCRIPT.json   prints its base URL, then serves until killed
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentskills/agent/internal/testutil/fakemodel"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakemodel SCRIPT.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	var script []fakemodel.Reply
	if err := json.Unmarshal(data, &script); err != nil {
		fmt.Fprintf(os.Stderr, "fakemodel: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	srv, err := fakemodel.Start(script...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Close()
}
