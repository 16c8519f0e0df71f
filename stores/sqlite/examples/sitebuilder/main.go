// Command sitebuilder is reactguard's demo (examples/sitebuilder) with its
// state kept in a SQLite file, so that the story spans processes: the
// first invocation runs the agent until create_site waits for the user's
// approval, keeps the run in the file and exits; a second invocation, a
// new process, finds the waiting run, approves or declines it, and the
// write runs once.
//
//	go run ./examples/sitebuilder -state /tmp/sitebuilder.db            # suspends and exits
//	go run ./examples/sitebuilder -state /tmp/sitebuilder.db -approve   # a new process approves
//	go run ./examples/sitebuilder -state /tmp/sitebuilder.db -decline   # … or declines
//
// Without -state it tells the whole story in one process, as the demo of
// the core module does. The snapshots are sealed under a key kept beside
// the database (<file>.key, created on first use): every process of the
// story needs the same key. A service keeps its key with its other
// secrets, never next to the snapshots.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/stores/sqlite"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, story.IsTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	var state string
	cfg, err := story.ParseFlagsWith(args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&state, "state", "", "keep the run in this SQLite file: suspend and exit, approve in a new process")
	})
	if err != nil {
		return story.Exit(stderr, err)
	}
	cfg.Model = story.Scripted()
	cfg.In, cfg.Interactive, cfg.Out = stdin, interactive, stdout
	if state == "" {
		cfg.RunID = "run-1"
		_, err = story.Run(ctx, cfg)
		return story.Exit(stderr, err)
	}
	store, err := sqlite.Open(ctx, state, nil)
	if err != nil {
		return story.Exit(stderr, err)
	}
	defer func() { _ = store.Close() }()
	if err := store.Migrate(ctx); err != nil {
		return story.Exit(stderr, err)
	}
	key, err := snapshotKey(state + ".key")
	if err != nil {
		return story.Exit(stderr, err)
	}
	cfg.State = &story.State{
		Guards: &guard.Options{Ledger: store.Evidence(), Approvals: store.Approvals(), WriteLedger: store.WriteLedger()},
		Claims: store.Claims(), Runs: store.Runs(), Keys: [][]byte{key},
		Hint: fmt.Sprintf("sitebuilder -state %s -approve (or -decline)", state),
	}
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}

// snapshotKey reads the key at path, creating it with random bytes on
// first use.
func snapshotKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil && len(key) >= react.MinSnapshotKey {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, react.MinSnapshotKey)
	_, _ = rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process created it first
		return snapshotKey(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(key); err != nil {
		_ = f.Close()
		return nil, err
	}
	return key, f.Close()
}
