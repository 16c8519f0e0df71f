// Package sqlmigrate reads the embedded schema migrations of the durable
// stores (stores/postgres, stores/sqlite): one file per step, named
// NNNN_name.sql, applied in version order. Applying them is each store's:
// it depends on the driver and on how the database serialises writers.
package sqlmigrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Step is one migration.
type Step struct {
	// Version is the number before the first "_" of the file's name.
	Version int
	// Name is the file's name, recorded with the version when applied.
	Name string
	// SQL is the file's content.
	SQL string
}

// Load returns the migrations in dir of fsys in version order. The files
// are embedded at build time, so a broken set is a programming error that
// every test of the store finds: Load panics on a file whose name has no
// version, and on versions that do not run 1, 2, … without a gap or a
// repeat.
func Load(fsys fs.FS, dir string) []Step {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("sqlmigrate: %v", err))
	}
	var out []Step
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic("sqlmigrate: migration without a version: " + path.Join(dir, e.Name()))
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			panic(fmt.Sprintf("sqlmigrate: %v", err))
		}
		out = append(out, Step{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, s := range out {
		if s.Version != i+1 {
			panic(fmt.Sprintf("sqlmigrate: %s is version %d; want %d (versions run 1, 2, … without gaps or repeats)", path.Join(dir, s.Name), s.Version, i+1))
		}
	}
	if len(out) == 0 {
		panic("sqlmigrate: no migration in " + dir)
	}
	return out
}
