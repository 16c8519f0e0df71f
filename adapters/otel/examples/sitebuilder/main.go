// Command sitebuilder tells reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) with OpenTelemetry: the
// loop's observer is the adapters/otel one, so every run, model call and
// tool call of the story is a span, and the -spans flag prints them with
// the OpenTelemetry stdout exporter after the story.
//
// The model is the story's scripted agent, so the program runs offline:
//
//	go run ./examples/sitebuilder -spans            # the story, then its spans as JSON
//	go run ./examples/sitebuilder -spans -decline   # the user declines
//	OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental go run ./examples/sitebuilder -spans
//
// The spans: one invoke_agent span for the run until it suspends for the
// approval, one for the resumed run (linked to the first through the
// snapshot), and under each the chat span of every model call and the
// execute_tool span of every tool call, with the verdicts as
// reactguard.tool.* attributes. The other flags are the story's (-approve,
// -decline, -lang, -log, -timeout).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/react"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, story.IsTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// scripted is the story's scripted agent, named for telemetry.
type scripted struct{ react.Model }

// Describe implements react.Describer.
func (scripted) Describe() react.ModelInfo {
	return react.ModelInfo{Provider: "reacttest", Name: "sitebuilder-script"}
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	var spans bool
	cfg, err := story.ParseFlagsWith(args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&spans, "spans", false, "print the story's spans (OpenTelemetry stdout exporter, JSON) after it")
	})
	if err != nil {
		return story.Exit(stderr, err)
	}
	// The spans are exported synchronously into a buffer as they end and
	// printed after the story, so that they do not interleave with it.
	var exported bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&exported), stdouttrace.WithPrettyPrint())
	if err != nil {
		return story.Exit(stderr, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
	tel, err := rgotel.New(tp, nil, &rgotel.Options{Getenv: getenv})
	if err != nil {
		return story.Exit(stderr, err)
	}
	cfg.Model = scripted{story.Scripted()}
	cfg.Observer = tel
	cfg.RunID = "run-1"
	cfg.In, cfg.Interactive, cfg.Out = stdin, interactive, stdout
	_, err = story.Run(ctx, cfg)
	if spans {
		_, _ = fmt.Fprintf(stdout, "\n-- spans (OpenTelemetry GenAI conventions %s, stdout exporter)\n", tel.Conventions())
		_, _ = stdout.Write(exported.Bytes())
	}
	return story.Exit(stderr, err)
}
