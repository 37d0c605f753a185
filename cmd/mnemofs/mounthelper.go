package main

import (
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// The mount(8) form. 'mount -t fuse.mnemofs SOURCE MOUNTPOINT -o OPTIONS'
// (and an fstab line of type fuse.mnemofs) runs mount.fuse3, which runs
// "mnemofs SOURCE MOUNTPOINT -o OPTIONS" through /bin/sh with mount(8)'s
// PATH, and waits for it: the mount must be up when it returns, served by
// a process left in the background (as sshfs, rclone and gocryptfs do).
// A link /sbin/mount.fuse.mnemofs -> mnemofs gives the same command line.
//
// SOURCE is the data directory, or an etcd://… URL (the --backend; the
// host-local data directory is then -o data=DIR). Each option is a flag
// of 'mnemofs mount' or a global one, '_' for '-' (allow_other,
// cache_size=1GiB, user=alice, encryption_key_file=/etc/mnemofs/key,
// log_file=/var/log/mnemofs.log, no_passthrough); ro is --read-only;
// foreground keeps the process in front. The options every mount takes
// (rw, dev, suid, exec, atime and their no- forms, defaults, auto,
// noauto, nofail, _netdev, x-*, ...) are mount(8)'s or the kernel's, and
// are passed over.

// passedOver are the generic options of mount(8) and of the kernel that
// are not mnemofs's to act on (FUSE mounts are nosuid and nodev for other
// users anyway).
var passedOver = map[string]bool{
	"rw": true, "defaults": true, "dev": true, "nodev": true, "suid": true, "nosuid": true,
	"exec": true, "noexec": true, "atime": true, "noatime": true, "relatime": true,
	"norelatime": true, "strictatime": true, "diratime": true, "nodiratime": true,
	"lazytime": true, "nolazytime": true, "sync": true, "async": true, "dirsync": true,
	"auto": true, "noauto": true, "nofail": true, "_netdev": true, "user": true,
	"users": true, "nouser": true, "owner": true, "group": true, "loud": true,
	"silent": true, "default_permissions": true, // set by --allow-other
}

// helperArgs turns the mount(8) form into mnemofs's own command line:
// "mount --background FLAGS MOUNTPOINT". ok is false when args are not
// in that form (a subcommand, a flag, or fewer than two operands).
// flags are the flags of 'mnemofs mount' and the global ones.
func helperArgs(args []string, isCommand func(string) bool, flags *pflag.FlagSet) (out []string, ok bool, err error) {
	if len(args) < 2 || strings.HasPrefix(args[0], "-") || isCommand(args[0]) {
		return nil, false, nil
	}
	var operands, opts []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			if i+1 == len(args) {
				return nil, true, fail("-o needs options (mount -t fuse.mnemofs DATA MOUNTPOINT -o OPTION,...)")
			}
			i++
			opts = append(opts, strings.Split(args[i], ",")...)
		case strings.HasPrefix(a, "-o"):
			opts = append(opts, strings.Split(a[2:], ",")...)
		case a == "-n" || a == "-s" || a == "-v":
			// mount(8)'s own: no mtab, sloppy, verbose.
		case strings.HasPrefix(a, "-"):
			return nil, true, fail("mount form: unknown argument %s (mnemofs SOURCE MOUNTPOINT -o OPTION,...)", a)
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) != 2 {
		return nil, false, nil
	}
	src, mnt := operands[0], operands[1]
	out = []string{"mount"}
	background := true
	sawData := false
	for _, o := range opts {
		key, val, hasVal := strings.Cut(o, "=")
		switch {
		case o == "":
			continue
		case passedOver[key] && !hasVal, strings.HasPrefix(key, "x-"), key == "comment",
			key == "fsname", key == "subtype":
			continue
		case o == "ro":
			out = append(out, "--read-only")
			continue
		case o == "foreground":
			background = false
			continue
		}
		name := strings.ReplaceAll(key, "_", "-")
		f := flags.Lookup(name)
		if f == nil || name == "background" || name == "help" {
			return nil, true, fail("unknown mount option %q: the options are mnemofs mount's flags with _ for - (%s)", key, optionNames(flags))
		}
		if name == "data" {
			sawData = true
		}
		switch {
		case hasVal:
			out = append(out, "--"+name+"="+val)
		case f.Value.Type() == "bool":
			out = append(out, "--"+name)
		default:
			return nil, true, fail("mount option %s needs a value (%s=...)", key, key)
		}
	}
	if strings.Contains(src, "://") {
		out = append(out, "--backend="+src)
	} else if sawData {
		return nil, true, fail("the source %s is the data directory: give it once, not again as -o data=", src)
	} else {
		out = append(out, "--data="+src)
	}
	if background {
		out = append(out, "--background")
	}
	return append(out, "--", mnt), true, nil
}

// optionNames lists the flags as mount options.
func optionNames(flags *pflag.FlagSet) string {
	var names []string
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Name != "background" && f.Name != "help" && !f.Hidden {
			names = append(names, strings.ReplaceAll(f.Name, "-", "_"))
		}
	})
	sort.Strings(names)
	return strings.Join(append(names, "ro", "foreground"), ", ")
}

// mountFlags is every flag 'mnemofs mount' takes, its own and the global
// ones.
func mountFlags(root, mount interface {
	PersistentFlags() *pflag.FlagSet
	Flags() *pflag.FlagSet
}) *pflag.FlagSet {
	fs := pflag.NewFlagSet("mount", pflag.ContinueOnError)
	fs.AddFlagSet(mount.Flags())
	fs.AddFlagSet(root.PersistentFlags())
	return fs
}
