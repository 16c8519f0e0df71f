package eval_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/task"
)

// Every task case passes with its scripted model: the branch taken, the
// suspension in step 2 resumed elsewhere, partial success accepted and
// refused by rule, the stale price refused in the answer.
func TestBuiltinTasks_ScriptedPass(t *testing.T) {
	cases := eval.BuiltinTasks()
	require.GreaterOrEqual(t, len(cases), 6)
	results := eval.RunTasks(context.Background(), cases, nil)
	for _, r := range results {
		assert.Truef(t, r.Passed, "%s: %v %s", r.ID, r.Diffs, r.Error)
	}
	var b bytes.Buffer
	require.NoError(t, eval.WriteTasksMarkdown(&b, results))
	assert.Contains(t, b.String(), "11/11 task cases passed.")
	assert.Contains(t, b.String(), "| `task-04-partial-success-accepted` | partially_met | true |")
}

// A mislabelled case fails, saying what differed: the checks can fail.
func TestTaskCase_Mislabelled(t *testing.T) {
	for _, c := range eval.BuiltinTasks() {
		bad := *c
		bad.Expect.Status = task.Met
		if c.Expect.Status == task.Met {
			bad.Expect.Status = task.Unmet
		}
		r := bad.RunTask(context.Background(), nil)
		assert.Falsef(t, r.Passed, "%s with the wrong status", c.ID)
		assert.NotEmpty(t, r.Diffs)
		bad = *c
		bad.Expect.Refused = append(bad.Expect.Refused[:len(bad.Expect.Refused):len(bad.Expect.Refused)], 42273)
		assert.Falsef(t, bad.RunTask(context.Background(), nil).Passed, "%s with a refusal that did not happen", c.ID)
		if c.Expect.Continue != nil {
			bad = *c
			flipped := !*c.Expect.Continue
			bad.Expect.Continue = &flipped
			assert.Falsef(t, bad.RunTask(context.Background(), nil).Passed, "%s with continue %v", c.ID, flipped)
		}
	}
}
