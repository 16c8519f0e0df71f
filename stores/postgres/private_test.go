package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvPGBin names the directory of the PostgreSQL server programs (initdb,
// pg_ctl) the failover tests start a private server with; without it they
// look in /usr/lib/postgresql/*/bin and on PATH, and skip when there is
// none (CI=true makes that a failure).
const EnvPGBin = "REACTGUARD_PG_BIN"

// private is a PostgreSQL server of a test's own, in a temporary directory
// and on a free port of the loopback, which the test may restart, crash or
// stop without disturbing any other test. It runs as the current user, or
// as postgres when the tests run as root (initdb refuses root).
type private struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	as   *user.User // nil: the current user
}

// pgBin returns the directory of initdb and pg_ctl, or "".
func pgBin() string {
	if d := os.Getenv(EnvPGBin); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// startPrivate starts a private server for t, stopped and removed when t
// ends. It does not fsync (the tests crash the server process, not the
// machine, so nothing committed is lost).
func startPrivate(t testing.TB) *private { return startPrivateWith(t, false) }

// startPrivateWith starts a private server, with fsync on when durable (as
// a production server runs: each commit waits for its WAL to reach the
// disk).
func startPrivateWith(t testing.TB, durable bool) *private {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no PostgreSQL server programs: install the postgresql package or set %s", EnvPGBin)
		}
		t.Skipf("no PostgreSQL server programs (initdb, pg_ctl): set %s", EnvPGBin)
	}
	dir, err := os.MkdirTemp("", "reactguard-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &private{t: t, bin: bin, dir: dir}
	t.Cleanup(func() {
		_ = p.ctl("stop", "-m", "immediate")
		_ = os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and no postgres user to run a private server as: %v", err)
		}
		p.as = u
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := p.cmd("initdb", "-D", p.data(), "-U", "reactguard", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.port = freePort(t)
	fsync := "off"
	if durable {
		fsync = "on"
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=%s -c max_connections=200", p.port, dir, fsync)
	if err := p.ctl("start", "-o", opts); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *private) data() string { return filepath.Join(p.dir, "data") }

// cmd returns the command of a server program, run as the server's user.
func (p *private) cmd(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, prog)
	if p.as == nil {
		return exec.Command(path, args...)
	}
	if runuser, err := exec.LookPath("runuser"); err == nil {
		return exec.Command(runuser, append([]string{"-u", p.as.Username, "--", path}, args...)...)
	}
	quoted := []string{path}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return exec.Command("su", p.as.Username, "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
}

// ctl runs pg_ctl on the server, waiting for the operation to complete.
func (p *private) ctl(op string, args ...string) error {
	all := append([]string{op, "-D", p.data(), "-l", filepath.Join(p.dir, "server.log"), "-w", "-t", "120"}, args...)
	if out, err := p.cmd("pg_ctl", all...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		return fmt.Errorf("pg_ctl %s: %w\n%s\nserver log:\n%s", op, err, out, tail(string(log), 2000))
	}
	return nil
}

// restart restarts the server; mode is pg_ctl's: "fast" (a clean
// shutdown) or "immediate" (the server crashes and recovers from its WAL).
func (p *private) restart(mode string) {
	p.t.Helper()
	if err := p.ctl("restart", "-m", mode); err != nil {
		p.t.Error(err)
	}
}

// dsn returns the DSN of the server's postgres database.
func (p *private) dsn() string {
	return fmt.Sprintf("postgres://reactguard@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", p.port)
}

// terminate ends every session whose application_name is name.
func (p *private) terminate(name string) int {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.dsn())
	if err != nil {
		p.t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) t`, name).Scan(&n); err != nil {
		p.t.Fatal(err)
	}
	return n
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
