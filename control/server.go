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

	"github.com/mnemofs/mnemofs/mcp"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Server answers CLI requests for a mounted store, and runs the calls of
// MCP servers that reach the store through it.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	path string
	host *mcp.Host
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
	owner := store.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
	s := &Server{ln: ln, path: path, host: mcp.NewHost(st, eng, mcp.Options{Owner: owner, Logger: logger})}
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
		switch req.Op {
		case "unmount":
			err = unmount()
		case "mcp":
			res, err = s.host.Do(r.Context(), mcp.Call{Tool: req.Tool, Args: req.Args, User: req.User, Via: req.Via, ReadOnly: req.ReadOnly, ReadOnlyWhy: req.ReadOnlyWhy})
		case "mcp-sessions":
			s.host.Report(req.Pid, req.Served)
		case "stats":
			res, err = Run(st, eng, req, progress)
			if err == nil {
				res = Stats{Stats: res.(store.Stats), MCP: s.host.Activity("")}
			}
		default:
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

// Stats is what "stats" answers from a process holding the store: the
// store's, and the MCP sessions it serves, by user.
type Stats struct {
	store.Stats
	MCP []mcp.Activity `json:"mcp_sessions,omitempty"`
}

// MCP is the host that runs the calls of MCP servers reaching the store
// through this socket: a process that is itself an MCP server runs its
// own calls on it too, so that stats counts them all.
func (s *Server) MCP() *mcp.Host { return s.host }

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
