// Command mnemofs mounts an agent's long-term memory as a directory tree.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// userError is a one-line error for the user (no usage text).
type userError struct{ msg string }

func (e userError) Error() string { return e.msg }

func fail(format string, a ...any) error { return userError{fmt.Sprintf(format, a...)} }

func main() {
	root := &cobra.Command{
		Use:           "mnemofs",
		Short:         "mount an LLM agent's long-term memory as a directory tree",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&globals.data, "data", "", "data directory (default $XDG_DATA_HOME/mnemofs or ~/.local/share/mnemofs; env MNEMOFS_DATA)")
	root.PersistentFlags().StringVar(&globals.backend, "backend", "", "where the store lives: etcd://HOST:PORT[,HOST:PORT...]/PREFIX for a store shared by several hosts (env MNEMOFS_BACKEND; default: Badger in the data directory)")
	addEtcdFlags(root)
	root.PersistentFlags().StringVar(&globals.keyFile, "encryption-key-file", "", "file holding the encryption key (env MNEMOFS_ENCRYPTION_KEY)")
	root.AddCommand(mountCmd(), unmountCmd(), mcpCmd(), importCmd(), exportCmd(), searchCmd(), statsCmd(), fsckCmd(), maintainCmd(), reportCmd(), policyCmd(), modelCmd(), agentHintCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mnemofs:", err)
		var ue userError
		if errors.As(err, &ue) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}
