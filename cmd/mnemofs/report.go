package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mnemofs/mnemofs/control"
)

func reportCmd() *cobra.Command {
	var out, user string
	c := &cobra.Command{
		Use:   "report [--user NAME] [--out FILE.html]",
		Short: "write the store's report page: one self-contained HTML file (growth, tiers, tags, users, links, maintenance, latency, warnings)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" && term.IsTerminal(int(os.Stdout.Fd())) {
				return fail("the report is an HTML page, not text for a terminal: give --out FILE.html (or redirect it: mnemofs report > report.html)")
			}
			var page string
			if err := run(control.Request{Op: "report", User: user}, nil, &page); err != nil {
				return err
			}
			if out == "" {
				_, err := os.Stdout.WriteString(page)
				return err
			}
			tmp, err := os.CreateTemp(filepath.Dir(abs(out)), ".report-*.html")
			if err != nil {
				return fail("cannot write %s: %v", out, err)
			}
			_, err = tmp.WriteString(page)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Chmod(tmp.Name(), 0o644)
			}
			if err == nil {
				err = os.Rename(tmp.Name(), out)
			}
			if err != nil {
				os.Remove(tmp.Name())
				return fail("cannot write %s: %v", out, err)
			}
			fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", out, len(page))
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "write the page to this file (default: standard output, when it is not a terminal)")
	c.Flags().StringVar(&user, "user", "", "only what this user may see (a mount serves its own --user only)")
	return c
}
