// Package policy is meta/policy.yaml: how each top-level tree takes
// changes (SPEC §5) and the settings of the lifecycle and health checks
// (SPEC §6). It parses and validates the file; the store keeps its bytes
// and the mount serves and accepts it (an invalid policy is refused with
// EINVAL and the old one kept). Pure: no I/O.
package policy
