package eval

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
)

// ModelFactory builds the model a command runs the cases with, and the
// name the report gives it. A factory that cannot run because it is not
// configured (an endpoint not set, say) returns an error made with
// [Unconfigured]: the command prints its help and exits 0.
type ModelFactory func(ctx context.Context) (model react.Model, name string, err error)

// Unconfigured returns the error a [ModelFactory] returns when its
// configuration is missing; help says what to set.
func Unconfigured(help string) error { return &unconfiguredError{help: help} }

type unconfiguredError struct{ help string }

func (e *unconfiguredError) Error() string { return "not configured: " + e.help }

// Command is the evaluation command line, shared by the commands that
// run the set: the core's eval/cmd/rgeval (scripted models only) and the
// adapters' (which add real models). The zero value runs the scripted
// model only.
type Command struct {
	// Name is the program's name in the usage text.
	Name string
	// Models are the models -model may name, besides "scripted" (each
	// case's own script), which is always available.
	Models map[string]ModelFactory
	// DefaultModel is -model's default; "" means "scripted".
	DefaultModel string
	// Judges are the judges -judge may name (none by default: the judge
	// is off unless asked for).
	Judges map[string]JudgeFactory
}

// JudgeFactory builds the judge a command reviews answers with, and its
// name; an error made with [Unconfigured] makes the command print its help
// and exit 0, as for models.
type JudgeFactory func(ctx context.Context) (judge Judge, name string, err error)

// Run parses args, runs the cases and writes the report to stdout; it
// returns the exit code: 0 when the run completed (whatever the scores,
// unless -strict), 1 when -strict and a case did not pass end to end, 2
// for bad flags or cases that do not load, 3 when the model or the run
// failed to start.
//
// Flags:
//
//	-model name      scripted (each case's script) or a model of Models
//	-cases dir       run the *.json cases under dir instead of the built-in set
//	-case id,...     run only these cases
//	-category name   run only this category (e.g. business_unmet)
//	-format f        markdown (default) or json
//	-json file       also write the JSON report to file
//	-lang en|zh      the language of every text the model sees
//	-timeout d       bound each case (default 5m; 0: none)
//	-strict          exit 1 unless every case passed end to end (and every
//	                 misbehaving variant, when they run, and every task case
//	                 with -tasks)
//	-variants        also run every case's misbehaving variants (default
//	                 true with the scripted model)
//	-judge name      review the answers with a judge of Judges (off by default)
//	-tasks           also run the tasks of several steps (eval/tasks)
//	-v               write the loop's events to stderr
func (c Command) Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := c.Name
	if name == "" {
		name = "rgeval"
	}
	models := []string{"scripted"}
	for m := range c.Models {
		models = append(models, m)
	}
	sort.Strings(models[1:])
	def := c.DefaultModel
	if def == "" {
		def = "scripted"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", def, "the model: "+strings.Join(models, ", "))
	dir := fs.String("cases", "", "a directory of *.json cases to run instead of the built-in set")
	only := fs.String("case", "", "comma-separated case ids to run")
	category := fs.String("category", "", "run only this category")
	format := fs.String("format", "markdown", "markdown or json")
	jsonOut := fs.String("json", "", "also write the JSON report to this file")
	lang := fs.String("lang", "en", "en or zh: the language of the texts the model sees")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on each case (0: none)")
	strict := fs.Bool("strict", false, "exit 1 unless every case (and every variant that ran) passed")
	variants := fs.Bool("variants", true, "also run the cases' misbehaving variants and check that the runtime protected the user (scripted model only)")
	judge := fs.String("judge", "", "review the final answers with this judge ("+strings.Join(judgeNames(c.Judges), ", ")+"); off when empty")
	verbose := fs.Bool("v", false, "write the loop's events to stderr")
	tasks := fs.Bool("tasks", false, "also run the built-in tasks of several steps (eval/tasks) and report them after the cases")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\nRuns reactguard's evaluation set (docs/evaluation.md) and prints the report.\n\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		return 2
	}
	if *format != "markdown" && *format != "json" {
		_, _ = fmt.Fprintf(stderr, "%s: -format %q: want markdown or json\n", name, *format)
		return 2
	}
	opts := Options{Timeout: *timeout}
	switch *lang {
	case "en":
	case "zh":
		opts.Lang = prompt.Chinese
	default:
		_, _ = fmt.Fprintf(stderr, "%s: -lang %q: want en or zh\n", name, *lang)
		return 2
	}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}

	cases, err := c.cases(*dir)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	cases, err = filter(cases, *only, *category)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}

	opts.ModelName = "scripted"
	var taskModel react.Model // nil: each task case's script
	if *model != "scripted" {
		factory, ok := c.Models[*model]
		if !ok {
			_, _ = fmt.Fprintf(stderr, "%s: -model %q: want one of %s\n", name, *model, strings.Join(models, ", "))
			return 2
		}
		m, label, err := factory(ctx)
		var unconfigured *unconfiguredError
		if errors.As(err, &unconfigured) {
			_, _ = io.WriteString(stdout, unconfigured.help)
			return 0
		}
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "%s: model %s: %v\n", name, *model, err)
			return 3
		}
		opts.Model = func(*Case) react.Model { return m }
		opts.ModelName, taskModel = label, m
	}
	opts.Variants = *variants && *model == "scripted"
	if *judge != "" {
		factory, ok := c.Judges[*judge]
		if !ok {
			_, _ = fmt.Fprintf(stderr, "%s: -judge %q: want one of %s\n", name, *judge, strings.Join(judgeNames(c.Judges), ", "))
			return 2
		}
		j, _, err := factory(ctx)
		var unconfigured *unconfiguredError
		if errors.As(err, &unconfigured) {
			_, _ = io.WriteString(stdout, unconfigured.help)
			return 0
		}
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "%s: judge %s: %v\n", name, *judge, err)
			return 3
		}
		opts.Judge = j
	}

	rep, err := Run(ctx, cases, opts)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 3
	}
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err == nil {
			err = rep.JSON(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "%s: -json: %v\n", name, err)
			return 3
		}
	}
	if *format == "json" {
		err = rep.JSON(stdout)
	} else {
		err = rep.Markdown(stdout)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 3
	}
	tasksPassed := true
	if *tasks {
		results := RunTasks(ctx, BuiltinTasks(), taskModel)
		if *format == "markdown" {
			if err := WriteTasksMarkdown(stdout, results); err != nil {
				_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return 3
			}
		}
		for _, r := range results {
			tasksPassed = tasksPassed && r.Passed
		}
	}
	if *strict && (!rep.Passed() || !tasksPassed) {
		_, _ = fmt.Fprintf(stderr, "%s: %d of %d cases passed end to end", name, rep.Total.EndToEnd.Passed, rep.Total.EndToEnd.Total)
		if rep.Variants != nil {
			passed := 0
			for _, v := range rep.Variants {
				if v.Passed {
					passed++
				}
			}
			_, _ = fmt.Fprintf(stderr, "; %d of %d misbehaving variant runs flagged exactly with the user protected", passed, len(rep.Variants))
		}
		_, _ = fmt.Fprintln(stderr)
		return 1
	}
	return 0
}

// judgeNames lists the judges' names in order, or "none".
func judgeNames(m map[string]JudgeFactory) []string {
	if len(m) == 0 {
		return []string{"none configured"}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// cases loads the cases of dir, or the built-in set.
func (c Command) cases(dir string) ([]*Case, error) {
	if dir == "" {
		return Builtin(), nil
	}
	return Load(os.DirFS(dir), ".")
}

// filter keeps the cases named in only (comma-separated ids) and of
// category; an id or category that selects nothing is an error.
func filter(cases []*Case, only, category string) ([]*Case, error) {
	if only != "" {
		ids := strings.Split(only, ",")
		var out []*Case
		for _, id := range ids {
			id = strings.TrimSpace(id)
			i := slices.IndexFunc(cases, func(c *Case) bool { return c.ID == id })
			if i < 0 {
				return nil, fmt.Errorf("-case: no case %q", id)
			}
			out = append(out, cases[i])
		}
		cases = out
	}
	if category != "" {
		var cat Category
		if err := cat.UnmarshalText([]byte(category)); err != nil {
			return nil, fmt.Errorf("-category: %w", err)
		}
		var out []*Case
		for _, c := range cases {
			if c.Category == cat {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("-category: no case of %s", cat)
		}
		cases = out
	}
	return cases, nil
}
