package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/control"
)

// policyCmd shows and sets meta/policy.yaml as the operator: the CLI runs
// as the data directory's owner (through a running mount, its control
// socket serves only its owner and root), which a --user mount, an MCP
// client or another local user is not.
func policyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy show | set FILE|-",
		Short: "show or set the store's policy (meta/policy.yaml); only the store's operator can set it",
	}
	c.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "print the store's policy",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var text string
			if err := run(control.Request{Op: "policy-show"}, nil, &text); err != nil {
				return err
			}
			fmt.Print(text)
			return nil
		},
	}, &cobra.Command{
		Use:   "set FILE|-",
		Short: "check a policy and store it (an invalid one is refused, the old one kept)",
		Args:  exactArgs(1, "FILE (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var b []byte
			var err error
			if args[0] == "-" {
				b, err = io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
			} else {
				b, err = os.ReadFile(args[0])
			}
			if err != nil {
				return fail("cannot read the policy: %v", err)
			}
			if err := run(control.Request{Op: "policy-set", Data: b}, nil, nil); err != nil {
				return fail("policy refused, the old one stays: %v", err)
			}
			fmt.Println("policy stored")
			return nil
		},
	})
	return c
}
