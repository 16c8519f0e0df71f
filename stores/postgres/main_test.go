package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/postgres"
)

// EnvDSN names the PostgreSQL server the tests use. Without it the tests
// try DefaultDSN when a server listens on 127.0.0.1:5432, and skip
// otherwise (CI=true makes an unreachable server a failure).
const (
	EnvDSN     = "REACTGUARD_POSTGRES_DSN"
	DefaultDSN = "postgres://reactguard:reactguard@127.0.0.1:5432/reactguard?sslmode=disable"
)

// schemaDSN is the DSN of this test process's own schema ("" when the
// tests skip); skipReason says why they skip.
var (
	baseDSN    string
	schemaDSN  string
	skipReason string
)

func TestMain(m *testing.M) {
	if code, ok := storetest.Main(openStores); ok {
		os.Exit(code)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	base := os.Getenv(EnvDSN)
	if base == "" {
		c, err := net.DialTimeout("tcp", "127.0.0.1:5432", time.Second)
		if err != nil {
			if os.Getenv("CI") == "true" {
				fmt.Fprintf(os.Stderr, "FAIL: CI=true and no PostgreSQL: set %s or start a server on 127.0.0.1:5432 (.ci/run does)\n", EnvDSN)
				return 1
			}
			skipReason = "no PostgreSQL"
			fmt.Printf("stores/postgres: tests skipped: no %s and no server on 127.0.0.1:5432 (run .ci/run, or set %s=postgres://user:pass@host:5432/db)\n", EnvDSN, EnvDSN)
			return m.Run()
		}
		_ = c.Close()
		base = DefaultDSN
	}
	schema, dsn, err := createSchema(base)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: PostgreSQL at %s: %v\n(create the role and database as .ci/run does, or set %s)\n", redact(base), err, EnvDSN)
		return 1
	}
	baseDSN, schemaDSN = base, dsn
	code := m.Run()
	if err := dropSchema(base, schema); err != nil {
		fmt.Fprintf(os.Stderr, "dropping test schema %s: %v\n", schema, err)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// createSchema creates a schema of its own for this test process and
// returns it with a DSN whose search_path selects it.
func createSchema(base string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = conn.Close(ctx) }()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "rg_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", "", err
	}
	return schema, withParam(base, "search_path", schema), nil
}

func dropSchema(base, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	return err
}

// withParam adds a runtime parameter to a URL or key=value DSN.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set(key, value)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " " + key + "=" + value
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return "the configured server"
}

// dsn returns the DSN of the test schema, or skips t.
func dsn(t testing.TB) string {
	t.Helper()
	if schemaDSN == "" {
		t.Skip(skipReason)
	}
	return schemaDSN
}

// open returns a migrated store on the test schema, closed when t ends.
func open(t testing.TB, opts *postgres.Options) *postgres.Store {
	t.Helper()
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn(t), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// freshSchema returns the DSN of a new, empty schema, dropped when t ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	dsn(t)
	schema, d, err := createSchema(baseDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dropSchema(baseDSN, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return d
}

// withPassword returns the URL DSN d with another password.
func withPassword(t testing.TB, d, password string) string {
	t.Helper()
	u, err := url.Parse(d)
	if err != nil || u.User == nil {
		t.Skip("needs a URL DSN with a user")
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// withDatabase returns the URL DSN d naming another database.
func withDatabase(t testing.TB, d, db string) string {
	t.Helper()
	u, err := url.Parse(d)
	if err != nil {
		t.Skip("needs a URL DSN")
	}
	u.Path = "/" + db
	return u.String()
}

// migrateTo brings the empty schema of conn to version v as the files in
// migrations/ write it (without the Store), recording each version: the
// state a database of an earlier release is in.
func migrateTo(t testing.TB, conn *pgx.Conn, v int) {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) < v {
		t.Fatalf("migrations: %d files, %v; want at least %d", len(files), err, v)
	}
	sort.Strings(files)
	if _, err := conn.Exec(bg, `CREATE TABLE reactguard_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for i, f := range files[:v] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(bg, string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := conn.Exec(bg, `INSERT INTO reactguard_schema (version, name) VALUES ($1, $2)`, i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
}

// upgraded opens a Store on the DSN d of a schema at version from and
// migrates it to SchemaVersion; the Store is closed when t ends.
func upgraded(t testing.TB, d string, from int) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(bg, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(bg); err != nil {
		t.Fatalf("Migrate from version %d = %v", from, err)
	}
	return s
}
