// Command wiregen writes the generated wire references (see package
// wiregen) under the repository root given by -root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/loom-lsp/loom-lsp/internal/wiregen"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := wiregen.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "wiregen:", err)
		os.Exit(1)
	}
}
