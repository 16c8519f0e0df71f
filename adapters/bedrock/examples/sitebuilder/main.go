// Command sitebuilder runs reactguard's sitebuilder story (package
// examples/sitebuilder/story of the core module) against a model on
// Amazon Bedrock, through the Converse API.
//
// The user asks for a website. The model may list the websites and spaces
// (reads), calls the write tool create_site, is told the write needs the
// user's approval (DEFERRED APPROVAL_REQUIRED), asks for it with
// builtin_node_approval, and the run suspends. The program asks you (or
// approves when stdin is not a terminal), resumes the JSON snapshot in a
// new loop value, as a new process would, and the model finishes.
//
// Set AWS_REGION and AWS credentials (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN for temporary ones) for
// an account with access to the model; without them the program explains
// what to set and exits 0:
//
//	AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... go run ./examples/sitebuilder
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/examples/sitebuilder/story"
)

// defaultModel is used when BEDROCK_MODEL is not set.
const defaultModel = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

const help = `sitebuilder runs the reactguard sitebuilder story against Amazon Bedrock
(the Converse API). Nothing was run because no AWS region and credentials are set.

Set:
  AWS_REGION             the region, e.g. us-east-1
  AWS_ACCESS_KEY_ID      the access key of an account with access to the model
  AWS_SECRET_ACCESS_KEY  its secret
  AWS_SESSION_TOKEN      optional: for temporary credentials
  BEDROCK_MODEL          optional: the model or inference profile id
                         (default ` + defaultModel + `)
  BEDROCK_ENDPOINT       optional: another endpoint (a VPC endpoint, a proxy)

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
	region := cmp.Or(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	key, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if region == "" || key == "" || secret == "" {
		_, _ = fmt.Fprint(stdout, help)
		return 0
	}
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, SessionToken: getenv("AWS_SESSION_TOKEN"), Source: "environment"}
	opts := bedrockruntime.Options{Region: region, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return creds, nil
	})}
	if e := getenv("BEDROCK_ENDPOINT"); e != "" {
		opts.BaseEndpoint = aws.String(e)
	}
	name := cmp.Or(getenv("BEDROCK_MODEL"), defaultModel)
	model := bedrock.New(bedrockruntime.New(opts), name, &bedrock.Options{MaxTokens: 2048})
	cfg.Model = model
	cfg.In, cfg.Interactive, cfg.Out, cfg.View = stdin, interactive, stdout, story.Conversation
	_, _ = fmt.Fprintf(stdout, "model %s at %s\n", name, model.Describe().ServerAddress)
	_, err = story.Run(ctx, cfg)
	return story.Exit(stderr, err)
}
