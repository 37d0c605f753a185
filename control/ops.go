package control

import (
	"fmt"

	"github.com/mnemofs/mnemofs/store"
)

// Request is one store-level command.
type Request struct {
	Op     string `json:"op"` // stats, fsck, import, export, unmount
	Src    string `json:"src,omitempty"`
	To     string `json:"to,omitempty"`
	Dest   string `json:"dest,omitempty"`
	From   string `json:"from,omitempty"`
	Repair bool   `json:"repair,omitempty"`
}

// Progress reports work done out of total (total 0: unknown).
type Progress func(done, total int64)

// Run executes req on an open store. It is what both the CLI (store not
// mounted) and the mount's control server (store mounted) call.
func Run(st *store.Store, req Request, p Progress) (any, error) {
	if p == nil {
		p = func(int64, int64) {}
	}
	switch req.Op {
	case "stats":
		return st.Stats()
	case "fsck":
		return st.Fsck(req.Repair)
	case "import":
		return st.Import(req.Src, req.To, store.ProgressFunc(p))
	case "export":
		return st.Export(req.Dest, req.From, store.ProgressFunc(p))
	}
	return nil, fmt.Errorf("unknown operation %q", req.Op)
}
