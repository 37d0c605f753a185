// `fsbench loopback [-no-passthrough] MOUNTPOINT ORIGINAL` mounts go-fuse's
// loopback filesystem like go-fuse's example/loopback (1 s entry and
// attribute TTLs). With -no-passthrough it refuses the kernel's FUSE
// passthrough, so reads and writes travel through the daemon as they must
// in mnemofs, whose content lives in a database, not in backing files.
// It prints "Mounted!" when ready and unmounts on SIGINT/SIGTERM.

package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func loopback(args []string) error {
	fl := flag.NewFlagSet("loopback", flag.ExitOnError)
	noPT := fl.Bool("no-passthrough", false, "do not use FUSE passthrough for file data")
	debug := fl.Bool("debug", false, "log every FUSE request")
	fl.Parse(args)
	if fl.NArg() != 2 {
		return fmt.Errorf("usage: fsbench loopback [-no-passthrough] [-debug] MOUNTPOINT ORIGINAL")
	}
	root, err := fs.NewLoopbackRoot(fl.Arg(1))
	if err != nil {
		return err
	}
	sec := time.Second
	opts := &fs.Options{
		AttrTimeout:     &sec,
		EntryTimeout:    &sec,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			Debug:       *debug,
			DirectMount: os.Geteuid() == 0,
			FsName:      fl.Arg(1),
			Name:        "loopback",
		},
	}
	if *noPT {
		opts.MountOptions.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	}
	srv, err := fs.Mount(fl.Arg(0), root, opts)
	if err != nil {
		return err
	}
	fmt.Println("Mounted!")
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-c
		srv.Unmount()
	}()
	srv.Wait()
	return nil
}
