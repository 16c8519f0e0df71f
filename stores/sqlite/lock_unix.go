//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f without waiting; the lock lasts
// until f is closed or the process ends.
func lockFile(f *os.File, _ bool) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

// locksWork reports whether owner locks tell a dead process from a live
// one on this system.
const locksWork = true
