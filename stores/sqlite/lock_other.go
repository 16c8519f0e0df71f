//go:build !unix

package sqlite

import (
	"errors"
	"os"
)

var errNoLocks = errors.New("sqlite: owner locks are not supported on this system")

// lockFile is not supported here: every owner counts as alive, so a write
// whose process died stays WRITE_IN_FLIGHT until an operator settles it.
func lockFile(*os.File, bool) error { return errNoLocks }

// locksWork reports whether owner locks tell a dead process from a live
// one on this system.
const locksWork = false
