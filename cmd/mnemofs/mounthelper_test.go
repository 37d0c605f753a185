package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelperArgs: the command line mount.fuse3 gives (SOURCE MOUNTPOINT
// -o OPTIONS) becomes 'mount' with the matching flags, in the background;
// mount(8)'s own options are passed over, unknown ones refused.
func TestHelperArgs(t *testing.T) {
	root := &cobra.Command{Use: "mnemofs"}
	root.PersistentFlags().StringVar(&globals.data, "data", "", "")
	root.PersistentFlags().StringVar(&globals.backend, "backend", "", "")
	root.PersistentFlags().StringVar(&globals.keyFile, "encryption-key-file", "", "")
	mc := mountCmd()
	root.AddCommand(mc, versionCmd())
	flags := mountFlags(root, mc)
	isCmd := func(n string) bool { return isCommand(root, n) }
	for _, c := range []struct {
		args []string
		want string // "" : not the mount form
		err  string
	}{
		{[]string{"/d", "/m", "-o", "rw,allow_other,cache_size=1GiB,user=alice,exec,suid,dev,nofail,_netdev,x-systemd.automount"},
			"mount --allow-other --cache-size=1GiB --user=alice --data=/d --background -- /m", ""},
		{[]string{"/d", "/m", "-o", "ro,no_passthrough,log_file=/var/log/m.log,foreground"},
			"mount --read-only --no-passthrough --log-file=/var/log/m.log --data=/d -- /m", ""},
		{[]string{"etcd://10.0.0.1:2379/team", "/m", "-o", "data=/var/lib/mnemofs,encryption_key_file=/etc/k"},
			"mount --data=/var/lib/mnemofs --encryption-key-file=/etc/k --backend=etcd://10.0.0.1:2379/team --background -- /m", ""},
		{[]string{"/d", "/m", "-orw,allow_other"}, "mount --allow-other --data=/d --background -- /m", ""},
		{[]string{"/d", "/m", "-o", "bogus=1"}, "", "unknown mount option \"bogus\""},
		{[]string{"/d", "/m", "-o", "cache_size"}, "", "needs a value"},
		{[]string{"/d", "/m", "-o", "data=/e"}, "", "give it once"},
		{[]string{"/d", "/m", "-o", "background"}, "", "unknown mount option"},
		{[]string{"version", "x", "-o", "y"}, "", ""},
		{[]string{"/d", "-o", "rw"}, "", ""},
	} {
		got, ok, err := helperArgs(c.args, isCmd, flags)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.want == "" && ok:
			t.Errorf("%q taken for the mount form: %q", c.args, got)
		case c.want != "" && (!ok || strings.Join(got, " ") != c.want):
			t.Errorf("%q:\n got %q\nwant %q", c.args, strings.Join(got, " "), c.want)
		}
	}
	if got := withoutBackground([]string{"mount", "--background", "--data=/d", "--", "--background"}); !slices.Equal(got, []string{"mount", "--data=/d", "--", "--background"}) {
		t.Errorf("withoutBackground: %q", got)
	}
}
