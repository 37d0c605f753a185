// Command mnemofs mounts an agent's long-term memory as a directory tree.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// userError is a one-line error for the user (no usage text).
type userError struct{ msg string }

func (e userError) Error() string { return e.msg }

func fail(format string, a ...any) error { return userError{fmt.Sprintf(format, a...)} }

// cmdArgs is the command line as the commands see it (the mount(8) form
// already turned into 'mount ...'): what a background mount runs again.
var cmdArgs []string

func main() {
	takeReadyPipe()
	root := &cobra.Command{
		Use:   "mnemofs",
		Short: "mount an LLM agent's long-term memory as a directory tree",
		Long: `mnemofs mounts an LLM agent's long-term memory as a directory tree.

mount(8) and fstab use the form 'mnemofs SOURCE MOUNTPOINT -o OPTION,...'
(mount -t fuse.mnemofs SOURCE MOUNTPOINT -o allow_other): SOURCE is the
data directory or an etcd:// URL, the options are the flags of
'mnemofs mount' with _ for -, and the mount goes on in the background.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       "-", // --version prints versionText
	}
	cobra.AddTemplateFunc("mnemofsVersion", versionText)
	root.SetVersionTemplate("{{mnemofsVersion}}")
	root.PersistentFlags().StringVar(&globals.data, "data", "", "data directory (default $XDG_DATA_HOME/mnemofs or ~/.local/share/mnemofs; env MNEMOFS_DATA)")
	root.PersistentFlags().StringVar(&globals.backend, "backend", "", "where the store lives: etcd://HOST:PORT[,HOST:PORT...]/PREFIX for a store shared by several hosts (env MNEMOFS_BACKEND; default: Badger in the data directory)")
	addEtcdFlags(root)
	root.PersistentFlags().StringVar(&globals.keyFile, "encryption-key-file", "", "file holding the encryption key (env MNEMOFS_ENCRYPTION_KEY)")
	mc := mountCmd()
	root.AddCommand(mc, unmountCmd(), mcpCmd(), importCmd(), exportCmd(), searchCmd(), statsCmd(), fsckCmd(), maintainCmd(), reportCmd(), policyCmd(), modelCmd(), backupCmd(), restoreCmd(), versionCmd(), agentHintCmd())
	cmdArgs = os.Args[1:]
	if helperForm(cmdArgs) {
		args, ok, err := helperArgs(cmdArgs, func(name string) bool { return isCommand(root, name) }, mountFlags(root, mc))
		if err != nil {
			exit(err)
		}
		if ok {
			cmdArgs = args
		}
	}
	root.SetArgs(cmdArgs)
	exit(root.Execute())
}

// helperForm reports whether args may be the mount(8) form: mount.fuse3
// always passes -o, and mount(8) runs a helper named mount.fuse.mnemofs
// (or mount.mnemofs) itself. Other command lines are cobra's, so that a
// mistyped command is not taken for a data directory.
func helperForm(args []string) bool {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "mount.") {
		return true
	}
	for _, a := range args {
		if a == "-o" || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
			return true
		}
	}
	return false
}

// isCommand reports whether name is one of root's commands.
func isCommand(root *cobra.Command, name string) bool {
	if name == "help" || name == "completion" {
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return true
		}
	}
	return false
}

// exit ends the process with err's message and status: 0 without one, 1
// for a user's error, 2 for others. A background mount tells its starter.
func exit(err error) {
	if err == nil {
		tellStarter(errors.New("the command ended without mounting"))
		os.Exit(0)
	}
	tellStarter(err)
	fmt.Fprintln(os.Stderr, "mnemofs:", err)
	var ue userError
	if errors.As(err, &ue) {
		os.Exit(1)
	}
	os.Exit(2)
}
