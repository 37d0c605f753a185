package control

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Server answers CLI requests for a mounted store.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	path string
}

// line is one NDJSON message of a reply: progress, then a result or error.
type line struct {
	Done   int64           `json:"done,omitempty"`
	Total  int64           `json:"total,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Final  bool            `json:"final,omitempty"`
}

// Serve listens on the control socket of dataDir (socket.go; Path says
// where) and answers the requests of the mount's own user and root,
// logging refused peers to logger. unmount is called for the "unmount"
// operation.
func Serve(dataDir string, st *store.Store, eng *views.Engine, unmount func() error, logger *log.Logger) (*Server, error) {
	if logger == nil {
		logger = log.Default()
	}
	ul, path, err := listen(dataDir)
	if err != nil {
		return nil, err
	}
	if path != SocketPath(dataDir) {
		logger.Printf("control socket at %s (the data dir cannot hold it)", path)
	}
	ln := peerListener{UnixListener: ul, logger: logger}
	s := &Server{ln: ln, path: path}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /op", func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		fl, _ := w.(http.Flusher)
		var last time.Time
		progress := func(done, total int64) {
			if time.Since(last) < 100*time.Millisecond && done != total {
				return
			}
			last = time.Now()
			enc.Encode(line{Done: done, Total: total})
			if fl != nil {
				fl.Flush()
			}
		}
		var res any
		var err error
		if req.Op == "unmount" {
			err = unmount()
		} else {
			res, err = Run(st, eng, req, progress)
		}
		out := line{Final: true}
		if err != nil {
			out.Error = err.Error()
		}
		if res != nil {
			out.Result, _ = json.Marshal(res)
		}
		enc.Encode(out)
	})
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Path is where the socket is (what the lock file should record).
func (s *Server) Path() string { return s.path }

// Close stops the server, letting replies in flight finish, and removes
// the socket.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	os.Remove(s.path)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
