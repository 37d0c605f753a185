package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/views"
)

// agent-hint: the paragraph an agent developer pastes into the agent's
// standing instructions (CLAUDE.md, AGENTS.md) so that the agent knows its
// memory folder is a mount and how to search it.

func agentHintCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agent-hint [MOUNTPOINT]",
		Short: "print a paragraph about a mount for an agent's CLAUDE.md or AGENTS.md",
		Long: "agent-hint prints a paragraph to paste into an agent's standing instructions\n" +
			"(CLAUDE.md, AGENTS.md): where its memory is, that it is searchable, and how.\n" +
			"Without MOUNTPOINT it describes the one mnemofs mount of this machine.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mnt, ro, err := hintMount(args)
			if err != nil {
				return err
			}
			fmt.Print(views.AgentHint(mnt, views.GuideOptions{ReadOnly: ro}))
			return nil
		},
	}
}

// hintMount is the mount the hint is about: MOUNTPOINT (mounted or not
// yet), else the only mnemofs mount; ro says it is mounted read-only.
func hintMount(args []string) (string, bool, error) {
	mounts := mnemofsMounts()
	if len(args) == 1 {
		mnt, err := filepath.Abs(args[0])
		if err != nil {
			return "", false, err
		}
		ro, ok := mounts[mnt]
		if !ok {
			fmt.Fprintf(os.Stderr, "mnemofs: %s is not a mnemofs mount (yet): the paragraph is for when it is\n", mnt)
		}
		return mnt, ro, nil
	}
	switch len(mounts) {
	case 0:
		return "", false, fail("no mnemofs mount here: give the MOUNTPOINT the agent's memory will be mounted at")
	case 1:
		for mnt, ro := range mounts {
			return mnt, ro, nil
		}
	}
	var list []string
	for mnt := range mounts {
		list = append(list, mnt)
	}
	return "", false, fail("%d mnemofs mounts (%s): give the MOUNTPOINT of the agent's memory", len(list), strings.Join(list, ", "))
}

// mnemofsMounts maps each mnemofs mount of this mount namespace to
// whether it is read-only.
func mnemofsMounts() map[string]bool {
	out := map[string]bool{}
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && strings.Contains(f[2], "mnemofs") {
			ro := false
			for _, o := range strings.Split(f[3], ",") {
				ro = ro || o == "ro"
			}
			out[unescapeMount(f[1])] = ro
		}
	}
	return out
}
