package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/reactguard/reactguard/internal/sqlmigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are the embedded schema steps, in version order.
var migrations = sqlmigrate.Load(migrationFiles, "migrations")

// SchemaVersion is the schema version this code writes and reads: the
// version of its newest migration.
var SchemaVersion = migrations[len(migrations)-1].Version

// ErrSchemaNewer is wrapped by the errors of [Open] and [Store.Migrate]
// when the database's schema was migrated by newer code than this: this
// code would misread it, so it refuses it. Upgrade the program (every
// process sharing the file) instead.
var ErrSchemaNewer = errors.New("sqlite: the database schema is newer than this code")

// ErrSchemaOlder is wrapped by the errors of the store's operations when
// the database lacks the store's tables: [Store.Migrate] was not called.
var ErrSchemaOlder = errors.New("sqlite: the database schema is older than this code; call Store.Migrate")

const versionTable = `CREATE TABLE IF NOT EXISTS reactguard_schema (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at INTEGER NOT NULL
)`

// Migrate brings the database's schema to [SchemaVersion]. Each missing
// embedded migration is applied in its own immediate transaction, which
// holds SQLite's write lock, so it is idempotent and safe when several
// processes call it at once: each reads the version under the lock and
// applies only what is still missing. A schema newer than this code is
// refused with [ErrSchemaNewer] and left untouched.
func (s *Store) Migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, versionTable); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	for _, m := range migrations {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			have, err := version(ctx, tx)
			if err != nil {
				return err
			}
			if have > SchemaVersion {
				return newer(have)
			}
			if m.Version <= have {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("sqlite: migrate to version %d (%s): %w", m.Version, m.Name, err)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO reactguard_schema (version, name, applied_at) VALUES (?, ?, ?)`, m.Version, m.Name, s.ts())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func newer(have int) error {
	return fmt.Errorf("%w: the database is at version %d, this code knows versions up to %d", ErrSchemaNewer, have, SchemaVersion)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// version returns the highest applied version, 0 when none.
func version(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM reactguard_schema`).Scan(&v)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return 0, nil
		}
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}

// checkVersion refuses a database whose schema is newer than this code.
func (s *Store) checkVersion(ctx context.Context) error {
	v, err := version(ctx, s.db)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return newer(v)
	}
	return nil
}

// schemaErr wraps the error of operation op: with ErrSchemaOlder when it
// says a table is missing, and with ctx's error when ctx ended (the
// statement was interrupted for it).
func schemaErr(ctx context.Context, op string, err error) error {
	switch {
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return fmt.Errorf("sqlite: %s: %w: %w", op, ErrSchemaOlder, err)
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("sqlite: %s: %w: %w", op, ctx.Err(), err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}
