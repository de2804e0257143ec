// Package testserver starts a real redis-server for a test (`redis-server` on PATH, or
// $REDIS_ATOMIC_SERVER_BIN, e.g. a valkey-server), on a unix socket in the test's temporary
// folder, and stops it by its pid when the test ends.
package testserver

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Server is one running server.
type Server struct {
	Socket string
	cmd    *exec.Cmd
}

// URL is the redis:// URL of the server's socket.
func (s *Server) URL() string { return "unix://" + s.Socket }

// Start starts a server and waits until it says it accepts connections.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv("REDIS_ATOMIC_SERVER_BIN")
	if bin == "" {
		bin = "redis-server"
	}
	// A short folder of its own: a unix socket's path is limited to about 100 bytes, and
	// t.TempDir() is named after the test.
	dir, err := os.MkdirTemp("", "ra-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s := &Server{Socket: sock, cmd: cmd}
	t.Cleanup(s.Stop)
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(strings.ToLower(lines.Text()), "ready to accept connections") {
			go drain(lines)
			return s
		}
	}
	t.Fatalf("%s exited before accepting connections", bin)
	return nil
}

func drain(lines *bufio.Scanner) {
	for lines.Scan() {
	}
}

// Stop kills the server by its pid and reaps it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
}

// Pause stops the server (SIGSTOP) until Resume: requests reach it and get no reply.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
