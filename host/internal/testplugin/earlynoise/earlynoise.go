// Package earlynoise prints to stdout from init when TESTPLUGIN_NOISE is
// set. Its import path sorts before .../sdk, so it runs before the sdk's
// own stdout redirect: only the host's handshake filter can save the
// handshake from it.
package earlynoise

import (
	"fmt"
	"os"
)

func init() {
	if os.Getenv("TESTPLUGIN_NOISE") != "" {
		fmt.Println("early init noise | with | pipes")
		fmt.Print("partial line without newline ")
	}
}
