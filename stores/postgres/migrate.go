package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reactguard/reactguard/internal/sqlmigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are the embedded schema steps, in version order.
var migrations = sqlmigrate.Load(migrationFiles, "migrations")

// SchemaVersion is the schema version this code writes and reads: the
// version of its newest migration.
var SchemaVersion = migrations[len(migrations)-1].Version

// ErrSchemaNewer is wrapped by the errors of [Open], [New] and
// [Store.Migrate] when the database's schema was migrated by newer code
// than this: this code would misread it, so it refuses it. Upgrade the
// program (every process sharing the database) instead.
var ErrSchemaNewer = errors.New("postgres: the database schema is newer than this code")

// ErrSchemaOlder is wrapped by the errors of the store's operations when
// the database lacks the store's tables: [Store.Migrate] was not called.
var ErrSchemaOlder = errors.New("postgres: the database schema is older than this code; call Store.Migrate")

// migrateLock is the advisory lock key that serialises Migrate across
// processes ("reactgu" in ASCII).
const migrateLock int64 = 0x72656163746775

// versionTable records every migration applied.
const versionTable = `CREATE TABLE IF NOT EXISTS reactguard_schema (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Migrate brings the database's schema to [SchemaVersion], applying each
// missing embedded migration in its own transaction. It is idempotent and
// safe when several processes call it at once: they take turns under a
// PostgreSQL advisory lock, and each applies only what is still missing. A
// schema newer than this code is refused with [ErrSchemaNewer] and left
// untouched.
func (s *Store) Migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.connectErr(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing ends the session and its lock
		}
	}()
	if _, err := conn.Exec(ctx, versionTable); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	have, err := version(ctx, conn.Conn())
	if err != nil {
		return err
	}
	if have > SchemaVersion {
		return newer(have)
	}
	for _, m := range migrations {
		if m.Version <= have {
			continue
		}
		err := pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO reactguard_schema (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			if dup := duplicateObject(err); dup != "" {
				return fmt.Errorf("%w: migration %d (%s) creates %s, which already exists, while reactguard_schema records version %d: "+
					"the migration was applied outside Migrate (by hand, or by a tool that does not record it), or reactguard_schema was changed. "+
					"Nothing was changed. If the existing objects match migrations/%s, record it with "+
					"INSERT INTO reactguard_schema (version, name) VALUES (%d, '%s') and call Migrate again; "+
					"otherwise drop the objects that migration creates and call Migrate again: %w",
					ErrSchemaPartial, m.Version, m.Name, dup, have, m.Name, m.Version, m.Name, err)
			}
			return fmt.Errorf("postgres: migrate to version %d (%s): %w", m.Version, m.Name, err)
		}
		have = m.Version
	}
	select { // a lease can be started now that its table exists
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

// ErrSchemaPartial is wrapped by the error of [Store.Migrate] when a
// migration that reactguard_schema does not record finds objects it
// creates already there: a migration half-applied outside Migrate. The
// message names the object and says how to repair it; Migrate changes
// nothing in that case (each migration runs in one transaction).
var ErrSchemaPartial = errors.New("postgres: the database holds part of a migration its schema version does not record")

// duplicateObject returns what an error of creating an object that exists
// names ("" for any other error).
func duplicateObject(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return ""
	}
	switch pgErr.Code {
	case "42P07", "42701", "42710", "42P06", "42723": // duplicate table/relation, column, object, schema, function
		return pgErr.Message
	}
	return ""
}

func newer(have int) error {
	return fmt.Errorf("%w: the database is at version %d, this code knows versions up to %d", ErrSchemaNewer, have, SchemaVersion)
}

// version returns the highest applied version, 0 when none.
func version(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM reactguard_schema`).Scan(&v); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
			return 0, nil
		}
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// checkVersion refuses a database whose schema is newer than this code.
func (s *Store) checkVersion(ctx context.Context) error {
	v, err := version(ctx, s.pool)
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
// statement was cancelled for it).
func schemaErr(ctx context.Context, op string, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01":
		return fmt.Errorf("postgres: %s: %w: %w", op, ErrSchemaOlder, err)
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("postgres: %s: %w: %w", op, ctx.Err(), err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
