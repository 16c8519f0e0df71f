package story

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reactguard/reactguard/modelerr"
)

// Name is the name of every sitebuilder program: its flag set's and the
// prefix of its error messages.
const Name = "sitebuilder"

// Synopsis lists the flags of [ParseFlags], for a program's help text.
const Synopsis = "[-approve|-decline] [-lang en|zh] [-log] [-timeout 5m]"

// DefaultTimeout is the default of the -timeout flag.
const DefaultTimeout = 5 * time.Minute

// usageError is a command line the program cannot run with: exit code 2.
// printed says the flag package has already reported it (with the usage).
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// ParseFlags parses the command line shared by the sitebuilder programs
// and returns the Config it selects; the caller adds the Model and the
// input and output. The flags:
//
//	-approve        approve the write without asking
//	-decline        decline the write without asking
//	-lang en|zh     language of the user's words and of every text the model sees
//	-log            print the loop's structured events (log/slog) to stderr
//	-timeout 5m     bound on the whole story
//
// The flag package reports its own errors and the usage (for -h too) on
// stderr. ParseFlags returns flag.ErrHelp for -h and -help, and a usage
// error for anything else it refuses; [Exit] maps both to the exit code.
func ParseFlags(args []string, stderr io.Writer) (Config, error) {
	return ParseFlagsWith(args, stderr, nil)
}

// ParseFlagsWith is [ParseFlags] with the program's own flags: more, when
// not nil, defines them on the flag set before it parses args.
func ParseFlagsWith(args []string, stderr io.Writer, more func(fs *flag.FlagSet)) (Config, error) {
	fs := flag.NewFlagSet(Name, flag.ContinueOnError)
	if more != nil {
		more(fs)
	}
	fs.SetOutput(stderr)
	var cfg Config
	var lang string
	var log bool
	fs.BoolVar(&cfg.Approve, "approve", false, "approve the write without asking")
	fs.BoolVar(&cfg.Decline, "decline", false, "decline the write without asking")
	fs.StringVar(&lang, "lang", "en", "language of the user's words and of every text the model sees: en or zh")
	fs.BoolVar(&log, "log", false, "also print the loop's structured events (log/slog) to stderr")
	fs.DurationVar(&cfg.Timeout, "timeout", DefaultTimeout, "bound on the whole story")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, &usageError{err: err, printed: true}
	}
	if cfg.Approve && cfg.Decline {
		return cfg, errExclusive
	}
	if err := cfg.Lang.UnmarshalText([]byte(lang)); err != nil {
		return cfg, &usageError{err: fmt.Errorf("-lang %q: want en or zh", lang)}
	}
	if log {
		cfg.Log = stderr
	}
	return cfg, nil
}

// Exit reports err on stderr, prefixed with the program's [Name], and
// returns the exit code: 0 for nil and flag.ErrHelp; 2 for a command line
// that [ParseFlags] or [Run] refuses (an error the flag package reported
// itself is not repeated); 1 for any other error. A failed model call (a
// [*modelerr.Error] in err's chain, as every model adapter returns) gets a
// second line with its kind and whether resuming later may succeed.
func Exit(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var usage *usageError
	if errors.As(err, &usage) {
		if !usage.printed {
			sayln(stderr, Name+":", err)
		}
		return 2
	}
	sayln(stderr, Name+":", err)
	var model *modelerr.Error
	if errors.As(err, &model) {
		say(stderr, "%s: the model failed (%s, retryable: %t); the run's snapshot could be resumed later\n",
			Name, model.Kind, model.Kind.Retryable())
	}
	return 1
}

// IsTerminal reports whether f is a character device (an interactive
// terminal), using only the standard library. Note that /dev/null is one
// too; [Run] treats a stdin that is closed at once like one that is not a
// terminal.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
