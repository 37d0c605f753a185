// Package policy is meta/policy.yaml: how each top-level tree, and every
// other file (other:, the files at the root among them), takes changes,
// and the settings of the lifecycle and health checks (docs/policy.md). It parses and
// validates the file; the store keeps its bytes and the mount serves and
// accepts it (an invalid policy is refused with EINVAL and the old one
// kept). Pure: no I/O.
package policy
