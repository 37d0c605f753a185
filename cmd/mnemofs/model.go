package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nlpodyssey/cybertron/pkg/converter"
	"github.com/nlpodyssey/cybertron/pkg/downloader"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/embed"
)

// Models live in DATA/models/<org>/<name>, in the layout cybertron
// converts to (config.json, tokenizer_config.json, vocab.txt,
// spago_model.bin). `mount --model` takes such a name or any directory.

func modelsDir() (string, error) {
	d, err := dataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "models"), nil
}

// resolveModel turns --model (a directory, or a name under the models
// directory) into a directory.
func resolveModel(arg string) (string, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return filepath.Abs(arg)
	}
	md, err := modelsDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(md, filepath.FromSlash(arg))
	if st, err := os.Stat(p); err == nil && st.IsDir() && !strings.Contains(arg, "..") {
		return p, nil
	}
	return "", fail("--model %s: no such directory, and no model of that name in %s (see 'mnemofs model list'; 'mnemofs model pull NAME' fetches one)", arg, md)
}

// loadModel loads the encoder of --model, or fails with one clear line.
func loadModel(arg string) (embed.Encoder, error) {
	dir, err := resolveModel(arg)
	if err != nil {
		return nil, err
	}
	enc, err := embed.Load(dir)
	if err != nil {
		return nil, fail("--model %s: %v", arg, err)
	}
	return enc, nil
}

func modelCmd() *cobra.Command {
	c := &cobra.Command{Use: "model pull NAME | list", Short: "local embedding models for hybrid search (mount --model)"}
	list := &cobra.Command{
		Use:   "list",
		Short: "list the models installed in DATA/models",
		Args:  exactArgs(0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			md, err := modelsDir()
			if err != nil {
				return err
			}
			var names []string
			err = filepath.WalkDir(md, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) && p == md {
						return fs.SkipAll
					}
					return err
				}
				if d.IsDir() && fileExists(filepath.Join(p, embed.WeightsFile)) {
					rel, _ := filepath.Rel(md, p)
					names = append(names, filepath.ToSlash(rel))
					return fs.SkipDir
				}
				return nil
			})
			if err != nil {
				return err
			}
			sort.Strings(names)
			if len(names) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no models in %s ('mnemofs model pull sentence-transformers/all-MiniLM-L6-v2' fetches one)\n", md)
				return nil
			}
			for _, n := range names {
				enc, err := embed.Load(filepath.Join(md, filepath.FromSlash(n)))
				if err != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\tbroken: %v\n", n, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%d dimensions\t%s\n", n, enc.Dim(), enc.Name())
				enc.Close()
			}
			return nil
		},
	}
	pull := &cobra.Command{
		Use:   "pull NAME",
		Short: "download a model from the Hugging Face hub and convert it (e.g. sentence-transformers/all-MiniLM-L6-v2)",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if strings.Count(name, "/") != 1 || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
				return fail("model pull needs a hub name such as sentence-transformers/all-MiniLM-L6-v2, got %q", name)
			}
			md, err := modelsDir()
			if err != nil {
				return err
			}
			zerolog.SetGlobalLevel(zerolog.WarnLevel) // cybertron logs every file at debug
			dir := filepath.Join(md, filepath.FromSlash(name))
			_, existed := os.Stat(dir)
			cleanup := func() {
				if existed != nil { // nothing half-fetched left behind
					os.RemoveAll(dir)
					os.Remove(filepath.Dir(dir))
				}
			}
			if err := downloader.Download(md, name, false, os.Getenv("HF_TOKEN")); err != nil {
				cleanup()
				return fail("model pull %s: downloading from huggingface.co failed (is the internet reachable?): %v", name, err)
			}
			if err := converter.Convert[float32](dir, false); err != nil {
				cleanup()
				return fail("model pull %s: converting: %v", name, err)
			}
			enc, err := embed.Load(dir)
			if err != nil {
				cleanup()
				return fail("model pull %s: the converted model does not load: %v", name, err)
			}
			defer enc.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s in %s (%d dimensions); mount with --model %s\n", name, dir, enc.Dim(), name)
			return nil
		},
	}
	c.AddCommand(list, pull)
	return c
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
