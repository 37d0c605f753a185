package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// dialWait is how long Call retries a dial to a socket that is not (yet)
// listening.
const dialWait = 3 * time.Second

// Call sends req to the mount serving socket for the store in dataDir,
// reporting progress, and decodes the result into result (which may be
// nil). It talks only to a mount run by dataDir's owner or root
// (*ForeignServerError otherwise).
func Call(dataDir, socket string, req Request, p Progress, result any) error {
	owner, err := dirOwner(dataDir)
	if err != nil {
		return fmt.Errorf("cannot reach the running mount: %w", err)
	}
	// One connection a call, closed after it: a failure to dial then
	// means the request never reached the mount (an MCP server relies on
	// that to know a call was not run), and a long-lived caller leaves no
	// idle connections behind.
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			// A mount holds the store a moment before its socket
			// listens: a command run just as it comes up retries the
			// dial for a while (a failed dial ran nothing).
			for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
				c, err := dialPeer(ctx, socket, owner)
				if err == nil || time.Since(start) > dialWait ||
					!(errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)) {
					return c, err
				}
			}
		},
		DisableKeepAlives: true,
	}}
	body, _ := json.Marshal(req)
	resp, err := c.Post("http://mnemofs/op", "application/json", bytes.NewReader(body))
	var foreign *ForeignServerError
	if errors.As(err, &foreign) {
		return foreign
	}
	if err != nil {
		return fmt.Errorf("cannot reach the running mount at %s: %w", socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the running mount refused the request: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("bad reply from the running mount: %v", err)
		}
		if !l.Final {
			if p != nil {
				p(l.Done, l.Total)
			}
			continue
		}
		if l.Error != "" {
			return &RemoteError{l.Error}
		}
		if result != nil && len(l.Result) > 0 {
			return json.Unmarshal(l.Result, result)
		}
		return nil
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the running mount closed the connection without an answer")
}

// RemoteError is an error the mount answered a request with: a message
// for the user, as the command would have said it without a mount.
type RemoteError struct{ Msg string }

func (e *RemoteError) Error() string { return e.Msg }
