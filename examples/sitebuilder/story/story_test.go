package story_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

const createArgs = `{"name":"Spring Sale","space_id":"sp-42"}`

// tell runs the story with cfg, printing to a buffer, and returns the
// result, the trace and the error.
func tell(t *testing.T, cfg story.Config) (story.Result, string, error) {
	t.Helper()
	var out bytes.Buffer
	cfg.Out = &out
	res, err := story.Run(context.Background(), cfg)
	return res, out.String(), err
}

func TestRunScripted(t *testing.T) {
	tests := []struct {
		name        string
		reason      string
		cfg         story.Config
		status      react.Status
		rounds      int
		executions  int
		want        []string
		wantMissing []string
	}{
		{"approve flag", "an approved write runs once, both outputs come from its result, the node finishes",
			story.Config{Approve: true}, react.Finished, 6, 1, []string{
				"round 2  create_site            DEFERRED APPROVAL_REQUIRED",
				"the host stores the JSON snapshot",
				"-- resuming from the snapshot in a new loop value: approve",
				`output site_id = "site-1001" (from tool_result c5)`,
				`output site_url = "https://spring-sale.example.com" (from tool_result c5)`,
				"create_site executed 1 time(s)",
			}, []string{"stdin is not a terminal"}},
		{"decline flag", "a declined write never runs; the model reads the refusal and fails the node",
			story.Config{Decline: true}, react.Failed, 4, 0, []string{
				"the user declined the call of create_site: not now",
				"-- failed after 4 rounds (model): the user declined creating the site",
				"create_site executed 0 time(s)",
			}, nil},
		{"no terminal", "without a flag and a terminal the story approves and says so",
			story.Config{In: strings.NewReader("n\n")}, react.Finished, 6, 1, []string{
				"-- stdin is not a terminal: approving (use -decline to refuse)",
			}, []string{"[y/n]"}},
		{"terminal yes", "a y on the terminal approves",
			story.Config{In: strings.NewReader("y\n"), Interactive: true}, react.Finished, 6, 1, []string{
				`Approve create_site(` + createArgs + `)? [y/n] -- resuming from the snapshot in a new loop value: approve`,
			}, nil},
		{"terminal no", "a no on the terminal declines",
			story.Config{In: strings.NewReader(" NO \n"), Interactive: true}, react.Failed, 4, 0, []string{
				"-- resuming from the snapshot in a new loop value: decline",
			}, nil},
		{"terminal retry", "an unclear answer asks again",
			story.Config{In: strings.NewReader("maybe\nyes\n"), Interactive: true}, react.Finished, 6, 1, []string{
				"? [y/n] Approve create_site",
			}, nil},
		{"terminal eof", "a closed stdin (such as /dev/null) approves like one that is not a terminal",
			story.Config{Interactive: true}, react.Finished, 6, 1, []string{
				"\n-- no answer on stdin: approving (use -decline to refuse)",
			}, nil},
		{"flag before terminal", "a flag answers even on a terminal, without asking",
			story.Config{Decline: true, In: strings.NewReader("y\n"), Interactive: true}, react.Failed, 4, 0, nil,
			[]string{"[y/n]"}},
		{"chinese", "the Chinese catalog and task reach the model",
			story.Config{Approve: true, Lang: prompt.Chinese}, react.Finished, 6, 1, []string{
				"user: " + story.Task(prompt.Chinese),
				"该写操作 create_site 须经用户确认。下一步：调用 builtin_node_approval",
				"用户已确认 create_site 的调用",
			}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Model = story.Scripted()
			res, out, err := tell(t, tt.cfg)
			require.NoError(t, err, "Run(%s)", tt.name)
			assert.Equal(t, tt.status, res.Status, "Run(%s).Status (%s)", tt.name, tt.reason)
			assert.Equal(t, tt.rounds, res.Rounds, "Run(%s).Rounds", tt.name)
			assert.Equal(t, tt.executions, res.Executions, "Run(%s).Executions (%s)", tt.name, tt.reason)
			assert.Equal(t, 1, res.Resumes, "Run(%s).Resumes", tt.name)
			for _, w := range tt.want {
				assert.Contains(t, out, w, "Run(%s) trace (%s)", tt.name, tt.reason)
			}
			for _, w := range tt.wantMissing {
				assert.NotContains(t, out, w, "Run(%s) trace (%s)", tt.name, tt.reason)
			}
		})
	}
}

func TestRunConversationView(t *testing.T) {
	res, out, err := tell(t, story.Config{Model: story.Scripted(), View: story.Conversation})
	require.NoError(t, err)
	assert.Equal(t, react.Finished, res.Status)
	for _, want := range []string{
		"  → create_site(" + createArgs + ")",
		"  create_site: the write create_site needs the user's approval",
		"-- suspended: create_site(" + createArgs + ") waits for approval\n",
		"  builtin_output_set: output site_id is set",
		"-- finished after 6 rounds: Created Spring Sale in Marketing.",
	} {
		assert.Contains(t, out, want, "the conversation view prints the calls' arguments and the tool messages")
	}
	assert.NotContains(t, out, "round ", "the conversation view has no round column")
	assert.Equal(t, 1, strings.Count(out, "user: "), "the task is printed once, before the run")
}

// followUps is a model that asks a follow-up question, then answers
// without a tool call, then fails the node with the user's answer.
func followUps() *reacttest.Model {
	return reacttest.Steps(
		reacttest.Reply(reacttest.Calls(reacttest.FollowUp("f1", "Which space?"))),
		reacttest.Reply(reacttest.Text("Thinking about it.")),
		func(req react.Request) (react.Response, error) {
			answer, _ := reacttest.ToolMessage(req, "f1")
			return reacttest.Calls(reacttest.FailNode("c9", "stopping after: "+answer.Content)), nil
		},
	)
}

func TestRunFollowUp(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		cfg    story.Config
		want   []string
	}{
		{"terminal answer", "a person types the answer on the terminal",
			story.Config{In: strings.NewReader("Marketing\n"), Interactive: true}, []string{
				"\n-- suspended: the model asks: Which space?\nanswer: -- resuming from the snapshot in a new loop value: answer",
				"the user answered: Marketing",
			}},
		{"terminal eof", "a closed terminal gets the default answer",
			story.Config{Interactive: true}, []string{"answer: ", "the user answered: " + story.DefaultAnswer}},
		{"no terminal", "without a terminal the default answer is given, without asking",
			story.Config{In: strings.NewReader("Marketing\n")}, []string{"the user answered: " + story.DefaultAnswer}},
		{"conversation", "the conversation view prints the question and the loop's note on a turn without tool calls",
			story.Config{View: story.Conversation}, []string{
				"-- suspended: the model asks: Which space?\n-- resuming",
				"model: Thinking about it.\n  (loop): ",
				"  builtin_node_fail: the node ended as failed: stopping after: the user answered: " + story.DefaultAnswer,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Model = followUps()
			res, out, err := tell(t, tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, react.Failed, res.Status, "Run(%s).Status", tt.name)
			assert.Equal(t, 1, res.Resumes)
			for _, w := range tt.want {
				assert.Contains(t, out, w, "Run(%s) trace (%s)", tt.name, tt.reason)
			}
		})
	}
}

func TestRunStopsAfterMaxResumes(t *testing.T) {
	questions := []string{"Which space?", "What colour should the site be?", "Who owns the site?", "When should it go live?", "Which language?", "Anything else?"}
	asks := 0
	model := reacttest.Func(func(react.Request) react.Response {
		asks++
		return reacttest.Calls(reacttest.FollowUp(fmt.Sprintf("f%d", asks), questions[asks-1]))
	})
	res, out, err := tell(t, story.Config{Model: model})
	require.NoError(t, err)
	assert.Equal(t, react.Suspended, res.Status, "a model that keeps asking leaves the run suspended")
	assert.Equal(t, story.MaxResumes, res.Resumes)
	assert.True(t, json.Valid(res.Snapshot), "the last snapshot is JSON a host can store")
	assert.Contains(t, out, "-- stopped: suspended after 5 rounds\n   create_site executed 0 time(s)\n")
}

func TestRunProvenance(t *testing.T) {
	model := reacttest.Script(
		reacttest.Calls(reacttest.Call("c1", "create_site", createArgs), reacttest.Call("c2", "list_spaces", `{}`)),
		reacttest.Calls(reacttest.FailNode("c3", "no space listed")),
	)
	res, out, err := tell(t, story.Config{Model: model, Approve: true})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Executions, "create_site with a space_id from nowhere never runs")
	assert.Equal(t, 0, res.Resumes, "a refused write asks for no approval")
	assert.Contains(t, out, "create_site            REJECTED PARAM_PROVENANCE_QUERY_FIRST",
		"space_id must come from a list_spaces result")
	assert.Contains(t, out, "round 1  list_spaces            SKIPPED                      list_spaces was not run",
		"the rest of a wave after a refusal is skipped")
}

// failing is a model whose every call fails with err.
type failing struct{ err error }

func (f failing) Generate(context.Context, react.Request) (react.Response, error) {
	return react.Response{}, f.err
}

func TestRunModelFailure(t *testing.T) {
	rateLimited := &modelerr.Error{Provider: "fake", Kind: modelerr.RateLimited, StatusCode: 429}
	res, _, err := tell(t, story.Config{Model: failing{rateLimited}})
	require.ErrorIs(t, err, rateLimited, "Run() error = %v; want the model's error", err)
	assert.Equal(t, react.Interrupted, res.Status)
	assert.True(t, json.Valid(res.Snapshot), "the snapshot survives a failed model call")

	var stderr bytes.Buffer
	assert.Equal(t, 1, story.Exit(&stderr, err))
	assert.Contains(t, stderr.String(), "sitebuilder: the model failed (rate_limited, retryable: true); the run's snapshot could be resumed later")
}

func TestRunModelFailureOnResume(t *testing.T) {
	boom := errors.New("boom")
	model := reacttest.Steps(
		reacttest.Reply(reacttest.Calls(reacttest.FollowUp("f1", "Which space?"))),
		func(react.Request) (react.Response, error) { return react.Response{}, boom },
	)
	res, out, err := tell(t, story.Config{Model: model})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 1, res.Resumes)
	assert.NotContains(t, out, "create_site executed", "a story that failed has no summary")
}

func TestRunAnswerReadError(t *testing.T) {
	broken := errors.New("broken terminal")
	for _, model := range []react.Model{story.Scripted(), followUps()} {
		_, _, err := tell(t, story.Config{Model: model, In: iotest.ErrReader(broken), Interactive: true})
		require.ErrorIs(t, err, broken, "Run() with an unreadable terminal = %v; want its error", err)
		assert.Contains(t, err.Error(), "reading the user's answer")
	}
}

// blocking is a model that waits for its context to end.
type blocking struct{}

func (blocking) Generate(ctx context.Context, _ react.Request) (react.Response, error) {
	<-ctx.Done()
	return react.Response{}, ctx.Err()
}

func TestRunTimeout(t *testing.T) {
	_, _, err := tell(t, story.Config{Model: blocking{}, Timeout: 1})
	require.ErrorIs(t, err, context.DeadlineExceeded, "Run() with Timeout = %v; want the deadline", err)
}

func TestRunBadConfig(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		cfg    story.Config
		code   int
		want   string
	}{
		{"no model", "the model is required", story.Config{}, 1, react.ErrNoModel.Error()},
		{"both decisions", "approve and decline exclude each other",
			story.Config{Model: story.Scripted(), Approve: true, Decline: true}, 2, "exclude each other"},
		{"bad view", "an unknown view is refused", story.Config{Model: story.Scripted(), View: 9}, 1, "view(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out, err := tell(t, tt.cfg)
			require.Error(t, err, "Run(%s) (%s)", tt.name, tt.reason)
			assert.Contains(t, err.Error(), tt.want)
			assert.Zero(t, res.Executions)
			assert.NotContains(t, out, "round", "a refused config runs nothing")
			var stderr bytes.Buffer
			assert.Equal(t, tt.code, story.Exit(&stderr, err), "Exit(Run(%s))", tt.name)
		})
	}
}

func TestRunLog(t *testing.T) {
	var log bytes.Buffer
	_, _, err := tell(t, story.Config{Model: story.Scripted(), Log: &log, RunID: "run-7"})
	require.NoError(t, err)
	for _, want := range []string{
		`msg="TOOL invoked" outcome=DEFERRED code=APPROVAL_REQUIRED tool=create_site`,
		`msg="REACT suspended" kind=approval`,
		`msg="REACT finished"`,
		"run=run-7",
	} {
		assert.Contains(t, log.String(), want)
	}
	assert.NotContains(t, log.String(), "REACT no_tool_calls", "spec §9 #1: a deferred write is no turn without tool calls")
}

func TestRunNilOutput(t *testing.T) {
	res, err := story.Run(context.Background(), story.Config{Model: story.Scripted()})
	require.NoError(t, err, "Run() without Out or In")
	assert.Equal(t, react.Finished, res.Status)
}

func TestRunSharesNothingBetweenStories(t *testing.T) {
	for range 2 {
		res, out, err := tell(t, story.Config{Model: story.Scripted(), Approve: true})
		require.NoError(t, err)
		assert.Equal(t, 1, res.Executions, "each story has its own backend")
		assert.Contains(t, out, `output site_id = "site-1001"`)
	}
}

// counter counts the events an extra observer receives.
type counter struct {
	tools, suspended, finished int
}

func (c *counter) Observe(ctx context.Context, e react.Event) context.Context {
	switch e.Kind {
	case react.EventToolInvoked:
		c.tools++
	case react.EventSuspended:
		c.suspended++
	case react.EventFinished:
		c.finished++
	default:
	}
	return ctx
}

// Config.Observer receives the events of every loop value of the story,
// the resumed ones included.
func TestRunExtraObserver(t *testing.T) {
	c := &counter{}
	res, _, err := tell(t, story.Config{Model: story.Scripted(), Approve: true, Observer: c})
	require.NoError(t, err)
	require.Equal(t, react.Finished, res.Status)
	assert.Equal(t, 1, c.suspended, "the suspension, reported by the first loop value")
	assert.Equal(t, 1, c.finished, "the end, reported by the loop value that resumed")
	tools := 0
	for _, m := range res.Transcript {
		if m.Role == react.RoleTool {
			tools++
		}
	}
	assert.Equal(t, tools, c.tools, "every call of the story, one event per tool message (none was skipped)")
	assert.Equal(t, 8, c.tools)
}
