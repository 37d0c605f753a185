//go:build linux && (amd64 || arm64)

package embed

import "testing"

// Without libopenblas (a fresh machine) the kernel cannot load, "" falls
// back to Go and "openblas" says why.
func TestOpenBLASMissing(t *testing.T) {
	saved := openBLASLibs
	defer func() { openBLASLibs = saved }()
	openBLASLibs = []string{"libopenblas-that-is-not-there.so.0"}
	if k, err := loadOpenBLAS(); err == nil || k != nil {
		t.Fatalf("loaded %v, %v", k, err)
	} else {
		t.Log(err)
	}
}
