package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/internal/storetest"
	"github.com/reactguard/reactguard/stores/sqlite"
)

func TestMain(m *testing.M) {
	if code, ok := storetest.Main(openStores); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

// open returns a migrated store on a new file in t's temporary directory,
// closed when t ends.
func open(t testing.TB, opts *sqlite.Options) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state.db"), opts)
}

func openAt(t testing.TB, path string, opts *sqlite.Options) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}
