// Command sitebuilder runs reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) against Google Gemini,
// through the Gemini API or Vertex AI.
//
// The user asks for a website. The model may list the websites and spaces
// (reads), calls the write tool create_site, is told the write needs the
// user's approval (DEFERRED APPROVAL_REQUIRED), asks for it with
// builtin_node_approval, and the run suspends. The program asks you (or
// approves when stdin is not a terminal), resumes the JSON snapshot in a
// new loop value, as a new process would, and the model finishes.
//
// Set GEMINI_API_KEY (Gemini API), or GOOGLE_GENAI_USE_VERTEXAI=true with
// GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (Vertex AI, with
// application default credentials); without either the program explains
// what to set and exits 0:
//
//	GEMINI_API_KEY=... go run ./examples/sitebuilder
//	GOOGLE_GENAI_USE_VERTEXAI=true GOOGLE_CLOUD_PROJECT=my-project GOOGLE_CLOUD_LOCATION=us-central1 go run ./examples/sitebuilder
//
// Flags: -approve / -decline answer the approval without asking; -lang zh
// speaks Chinese to the model; -log prints the loop's structured events;
// -timeout bounds the whole run.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/adapters/gemini"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// defaultModel is used when GEMINI_MODEL is not set.
const defaultModel = "gemini-2.5-flash"

const help = `sitebuilder runs the reactguard sitebuilder story against Google Gemini.
Nothing was run because no credentials are set.

For the Gemini API, set:
  GEMINI_API_KEY            the key (https://aistudio.google.com/apikey)

For Vertex AI, set:
  GOOGLE_GENAI_USE_VERTEXAI true
  GOOGLE_CLOUD_PROJECT      the project id
  GOOGLE_CLOUD_LOCATION     the region, e.g. us-central1
  and application default credentials (gcloud auth application-default login)

Optional:
  GEMINI_BASE_URL           another endpoint that speaks the API
  GEMINI_MODEL              the model name (default ` + defaultModel + `)

Then:
  go run ./examples/sitebuilder ` + story.Synopsis + `
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, story.IsTerminal(os.Stdin), os.Stdout, os.Stderr))
}

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, interactive bool, stdout, stderr io.Writer) int {
	cfg, err := story.ParseFlags(args, stderr)
	if err != nil {
		return story.Exit(stderr, err)
	}
	vertex := strings.EqualFold(getenv("GOOGLE_GENAI_USE_VERTEXAI"), "true") || getenv("GOOGLE_GENAI_USE_VERTEXAI") == "1"
	key := cmp.Or(getenv("GEMINI_API_KEY"), getenv("GOOGLE_API_KEY"))
	baseURL := getenv("GEMINI_BASE_URL")
	if key == "" && !vertex && baseURL == "" {
		_, _ = fmt.Fprint(stdout, help)
		return 0
	}
	cc := &genai.ClientConfig{APIKey: cmp.Or(key, "unused"), Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: baseURL}}
	if vertex {
		cc = &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: getenv("GOOGLE_CLOUD_PROJECT"),
			Location: getenv("GOOGLE_CLOUD_LOCATION"), HTTPOptions: genai.HTTPOptions{BaseURL: baseURL}}
	}
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		return story.Exit(stderr, err)
	}
	name := cmp.Or(getenv("GEMINI_MODEL"), defaultModel)
	model := gemini.New(client, name, &gemini.Options{MaxTokens: 2048})
	cfg.Model = model
	cfg.In, cfg.Interactive, cfg.Out, cfg.View = stdin, interactive, stdout, story.Conversation
	info := model.Describe()
	_, _ = fmt.Fprintf(stdout, "model %s at %s (%s)\n", name, info.ServerAddress, info.Provider)
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
