// Package redisatomictest starts a real redis-server for tests: the code under test runs the
// library's scripts on a real server, never a mock of Redis semantics (a mock cannot be trusted
// to run Lua, expire keys or keep time as the server does).
//
// The server is `redis-server` from PATH, or $REDIS_ATOMIC_SERVER_BIN (e.g. a valkey-server),
// listening only on a unix socket in a short temporary folder (no TCP port to collide with), with
// persistence off. Start ties its life to a test (t.Cleanup stops it by its pid); Launch is for
// TestMain, where one server serves a whole package.
//
//	func TestCheckout(t *testing.T) {
//		srv := redisatomictest.Start(t) // stopped when the test ends
//		client, err := redisatomic.Connect(ctx, srv.URL())
//		...
//	}
//
// It imports nothing of redisatomic, so the module's own tests use it too.
package redisatomictest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Server is one running server.
type Server struct {
	// Socket is the path of the server's unix socket.
	Socket string
	dir    string
	cmd    *exec.Cmd
}

// URL is the unix:// URL of the server's socket (for redisatomic.Connect or redis.ParseURL).
func (s *Server) URL() string { return "unix://" + s.Socket }

// Start starts a server for t and stops it when t ends; the test fails if it cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts a server and waits until it accepts connections; the caller stops it (Stop).
func Launch() (*Server, error) { return launch("--port", "0") }

// launch starts a server with extra arguments (its port first).
func launch(extra ...string) (*Server, error) {
	bin := os.Getenv("REDIS_ATOMIC_SERVER_BIN")
	if bin == "" {
		bin = "redis-server"
	}
	// A short folder of its own: a unix socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "ra-go-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "redis.sock")
	args := append(extra, "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--loglevel", "notice")
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &Server{Socket: sock, dir: dir, cmd: cmd}
	if err := awaitReady(out); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	return s, nil
}

// awaitReady reads the server's log until it accepts connections, then drains the rest in the
// background (a full pipe would block the server).
func awaitReady(out io.Reader) error {
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(strings.ToLower(lines.Text()), "ready to accept connections") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return nil
		}
	}
	return errors.New("exited before accepting connections")
}

// Stop kills the server by its pid, reaps it and removes its folder.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}

// Pause stops the server (SIGSTOP) until Resume: requests reach it and get no reply, so a test
// can see how the code under test handles a stalled server.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
