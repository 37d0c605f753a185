//go:build !(linux && (amd64 || arm64))

package embed

import "errors"

func openBLAS() (*kernel, error) {
	return nil, errors.New("OpenBLAS is only loaded on linux/amd64 and linux/arm64")
}
