// Command testmodel writes a randomly initialised BERT sentence encoder in
// the layout embed.Load (and cybertron v0.2.1) reads:
//
//	go run ./scripts/testmodel [-shape tiny|minilm] [-seed N] DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mnemofs/mnemofs/embed/testmodel"
)

func main() {
	shape := flag.String("shape", "tiny", "model shape: tiny (2x64, tests) or minilm (6x384, all-MiniLM-L6-v2's)")
	seed := flag.Uint64("seed", 1, "random seed; the same seed writes the same model")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: testmodel [-shape tiny|minilm] [-seed N] DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	s, err := testmodel.ShapeByName(*shape)
	if err == nil {
		err = testmodel.Write(flag.Arg(0), s, *seed)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testmodel:", err)
		os.Exit(1)
	}
}
