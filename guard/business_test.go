package guard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// page is a paged, dated, possibly pending or walled result.
type page struct {
	Items   []string  `json:"items"`
	Next    string    `json:"next,omitempty"`
	Fetched time.Time `json:"fetched,omitzero"`
	Job     string    `json:"job,omitempty"`
	Status  string    `json:"status,omitempty"`
	Wall    string    `json:"wall,omitempty"`
}

var bizNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// bizTool is list_sites with a contract that reads pages; poll is its job
// status tool.
func bizTool(t *testing.T, c *tool.Contract) *tool.Tool {
	t.Helper()
	tl := tool.New("list_sites", "lists sites", func(context.Context, struct {
		Cursor string `json:"cursor,omitempty"`
	}) (page, error) {
		return page{}, nil
	})
	tl.Effect = tool.Read
	tl.Contract = c
	poll := tool.New("job_status", "a job's status", func(context.Context, struct {
		Job string `json:"job"`
	}) (page, error) {
		return page{}, nil
	})
	poll.Effect = tool.Read
	_, err := tool.NewCatalog(tl, poll)
	require.NoError(t, err)
	return tl
}

// bizSend passes a SUCCESS with data through the response contract with
// the node's requirement need and the given language; it returns the
// observation and the execution account.
func bizSend(t *testing.T, lang prompt.Lang, tl *tool.Tool, need tool.Requirement, data any) (observation.Observation, invoker.Execution) {
	t.Helper()
	var ex invoker.Execution
	success := observation.Success("list_sites succeeded", data)
	obs, err := guard.ResponseContract(guard.ResponseContractOptions{Catalog: prompt.For(lang), Now: func() time.Time { return bizNow }})(context.Background(),
		invoker.Call{ID: "c1", Name: "list_sites", Tool: tl, Args: json.RawMessage(`{}`), Require: need, Execution: &ex},
		func(context.Context, invoker.Call) (observation.Observation, error) { return success, nil })
	require.NoError(t, err)
	return obs, ex
}

var pageContract = &tool.Contract{
	Provenance: func(r any) evidence.Provenance {
		return evidence.Provenance{FetchedAt: r.(page).Fetched, Source: "sites-api"}
	},
	MaxAge: 15 * time.Minute,
	Paging: &tool.Paging{Next: func(r any) string { return r.(page).Next }, Param: "cursor"},
	Async: &tool.Async{Pending: func(r any) (string, bool) {
		p := r.(page)
		return p.Job, p.Status == "running"
	}, Poll: "job_status", Param: "job"},
	Blocked: func(r any) (tool.Wall, string) {
		switch r.(page).Wall {
		case "captcha":
			return tool.WallCaptcha, "a captcha asks to pick the traffic lights"
		case "login":
			return tool.WallLogin, "the page asks to sign in"
		case "rate":
			return tool.WallRate, "too many requests"
		case "panic":
			panic("unexpected wall")
		}
		return tool.NoWall, ""
	},
}

func TestResponseContract_BusinessVerdicts(t *testing.T) {
	tl := bizTool(t, pageContract)
	const (
		latest   = tool.RequireLatest
		complete = tool.RequireComplete
		both     = tool.RequireLatest | tool.RequireComplete
	)
	fresh, stale := bizNow.Add(-5*time.Minute), bizNow.Add(-2*time.Hour)
	tests := []struct {
		reason       string
		need         tool.Requirement
		data         page
		outcome      outcome.Outcome
		code         errcode.Code
		message      string // the whole message the model reads ("" when it is the plain success)
		insufficient bool
		pending      string
	}{
		{"a fresh, complete, done page serves the goal", both, page{Items: []string{"s-1"}, Fetched: fresh}, outcome.Success, 0, "", false, ""},
		{"a cache hit older than MaxAge cannot satisfy a latest requirement: insufficient, stale, a retry can help", latest,
			page{Items: []string{"s-1"}, Fetched: stale}, outcome.Success, 0,
			"list_sites succeeded\nbusiness status insufficient: the result of list_sites is 2h0m0s old, older than the 15m0s allowed for the latest data; calling it again can help. Next: " +
				"call list_sites again for fresh data; if it stays out of date, tell the user that the data may be outdated and when it was fetched", true, ""},
		{"without a latest requirement an old result is evidence", complete, page{Items: []string{"s-1"}, Fetched: stale}, outcome.Success, 0, "", false, ""},
		{"a result without a fetch time was fetched by the call", latest, page{Items: []string{"s-1"}}, outcome.Success, 0, "", false, ""},
		{"a page followed by more is insufficient for a complete requirement; the next step names the cursor", complete,
			page{Items: []string{"s-1"}, Next: "p2", Fetched: fresh}, outcome.Success, 0,
			"list_sites succeeded\nbusiness status insufficient: the result of list_sites is one page and more pages follow, so it is not complete; calling it again with the same arguments cannot help. Next: " +
				`call list_sites again with cursor set to "p2" to read the next page; the data is complete only after the last page`, true, ""},
		{"without a complete requirement a first page is evidence", latest, page{Items: []string{"s-1"}, Next: "p2", Fetched: fresh}, outcome.Success, 0, "", false, ""},
		{"the last page completes the data", complete, page{Items: []string{"s-9"}, Fetched: fresh}, outcome.Success, 0, "", false, ""},
		{"an accepted job is never done at once: accepted, with a poll next step", 0,
			page{Items: []string{"-"}, Job: "job-7", Status: "running"}, outcome.Success, 0,
			"list_sites succeeded\nbusiness status accepted, not done: list_sites accepted the request as job job-7; the job is not done yet; calling it again can help. Next: " +
				`call job_status with job "job-7" to check whether the job is done; do not tell the user it is done before a check says so`, false, "job-7"},
		{"a finished job is a result", 0, page{Items: []string{"s-1"}, Job: "job-7", Status: "done"}, outcome.Success, 0, "", false, ""},
		{"a captcha page is blocked, never a successful body", 0, page{Wall: "captcha"}, outcome.Failed, errcode.ToolBlocked,
			"list_sites answered with a captcha, not with its content: a captcha asks to pick the traffic lights. Next: " +
				"a person must get past it: tell the user with builtin_node_follow_up or use another source; do not call list_sites again the same way", false, ""},
		{"a login wall is blocked", 0, page{Wall: "login"}, outcome.Failed, errcode.ToolBlocked,
			"list_sites answered with a login page, not with its content: the page asks to sign in. Next: " +
				"a person must get past it: tell the user with builtin_node_follow_up or use another source; do not call list_sites again the same way", false, ""},
		{"a rate wall is blocked, and later can help", 0, page{Wall: "rate"}, outcome.Failed, errcode.ToolBlocked,
			"list_sites answered with a rate-limit page, not with its content: too many requests. Next: try again later or use another source; do not call list_sites again at once", false, ""},
		{"a wall check that panics is a result the contract cannot read", 0, page{Wall: "panic"}, outcome.Failed, errcode.ToolResultInvalid, "", false, ""},
		{"a stale page with more pages reports the staleness first: fresh data comes first", both, page{Items: []string{"s-1"}, Next: "p2", Fetched: stale}, outcome.Success, 0, "", true, ""},
	}
	for _, tt := range tests {
		obs, ex := bizSend(t, prompt.English, tl, tt.need, tt.data)
		assert.Equalf(t, tt.outcome, obs.Outcome(), "%s: %v", tt.reason, obs)
		assert.Equalf(t, tt.code, obs.Code(), "%s: %v", tt.reason, obs)
		switch {
		case tt.message != "":
			assert.Equalf(t, tt.message, obs.Message(), "%s", tt.reason)
		case tt.outcome == outcome.Success && !tt.insufficient && tt.pending == "":
			assert.Equalf(t, "list_sites succeeded", obs.Message(), "%s: the success stands unchanged", tt.reason)
		}
		assert.Equalf(t, tt.insufficient, ex.Insufficient, "%s: Execution.Insufficient", tt.reason)
		assert.Equalf(t, tt.pending != "", ex.Pending, "%s: Execution.Pending", tt.reason)
		assert.Equalf(t, tt.pending, ex.Job, "%s: Execution.Job", tt.reason)
		if tt.insufficient {
			assert.NotEmptyf(t, ex.Reason, "%s: the reason is noted for the call report", tt.reason)
			assert.Containsf(t, obs.Message(), ex.Reason, "%s: the model reads the same reason", tt.reason)
		}
		if tt.outcome == outcome.Success {
			assert.Equalf(t, tt.data, obs.Data(), "%s: the result is kept", tt.reason)
		}
	}
}

// The business verdict reaches the model in Chinese too.
func TestResponseContract_BusinessVerdictsChinese(t *testing.T) {
	tl := bizTool(t, pageContract)
	obs, _ := bizSend(t, prompt.Chinese, tl, tool.RequireLatest, page{Items: []string{"s-1"}, Fetched: bizNow.Add(-2 * time.Hour)})
	assert.Equal(t, "list_sites succeeded\n业务状态 信息不足：list_sites 的结果已有 2h0m0s，超过了最新数据允许的 15m0s；再次调用可能有帮助。下一步：再调用 list_sites 获取新数据；仍然过期时，告诉用户数据可能已过时以及抓取时间", obs.Message())
	obs, _ = bizSend(t, prompt.Chinese, tl, tool.RequireComplete, page{Items: []string{"s-1"}, Next: "p2"})
	assert.Contains(t, obs.Message(), "业务状态 信息不足：list_sites 的结果只是一页")
	assert.Contains(t, obs.Message(), `把 cursor 设为 "p2" 读取下一页`)
	obs, _ = bizSend(t, prompt.Chinese, tl, 0, page{Job: "job-7", Status: "running"})
	assert.Contains(t, obs.Message(), "业务状态 已受理，未完成：list_sites 已受理请求，任务编号 job-7")
	assert.Contains(t, obs.Message(), "调用 job_status，job 填 \"job-7\"")
	obs, _ = bizSend(t, prompt.Chinese, tl, 0, page{Wall: "captcha"})
	assert.Equal(t, "list_sites 返回的是验证码页面，不是内容：a captcha asks to pick the traffic lights。下一步：须由人越过阻断：用 builtin_node_follow_up 告诉用户，或换数据源；不要以同样方式再调用 list_sites", obs.MessageIn(prompt.For(prompt.Chinese)))
}

func TestResponseContract_EmptyAnswersAndSufficient(t *testing.T) {
	answers := bizTool(t, &tool.Contract{Empty: tool.EmptyAnswers})
	obs, ex := bizSend(t, prompt.English, answers, 0, []string{})
	assert.Equal(t, outcome.Success, obs.Outcome())
	assert.True(t, ex.Answered, "an empty result the contract takes as the answer is noted answered")
	assert.False(t, ex.Insufficient)
	assert.Equal(t, "list_sites succeeded\nbusiness status answered: the empty result of list_sites is the answer: nothing matches; calling it again with the same arguments cannot help. Next: report that nothing matches; do not search again for the same", obs.Message())
	obs, ex = bizSend(t, prompt.English, answers, 0, []string{"s-1"})
	assert.False(t, ex.Answered, "a non-empty result is no empty answer")
	assert.Equal(t, "list_sites succeeded", obs.Message())

	short := bizTool(t, &tool.Contract{Sufficient: func(r any) (bool, string) { return len(r.([]string)) > 1, "fewer than two sites" }})
	obs, ex = bizSend(t, prompt.English, short, 0, []string{"s-1"})
	assert.True(t, ex.Insufficient)
	assert.Equal(t, "fewer than two sites", ex.Reason, "the call report keeps the contract's own reason")
	assert.Equal(t, "list_sites succeeded\nbusiness status insufficient: the result of list_sites does not serve the goal: fewer than two sites; calling it again with the same arguments cannot help. Next: "+
		"do not treat this result as enough: refine the call, use another source, or tell the user what is missing", obs.Message(),
		"the model is told why the result is insufficient, not only the report")
}

// A contract that cannot work is refused when the tool is added.
func TestContract_Checks(t *testing.T) {
	mk := func(c *tool.Contract) error {
		tl := tool.New("list_sites", "lists sites", func(context.Context, struct {
			Cursor string `json:"cursor,omitempty"`
		}) (page, error) {
			return page{}, nil
		})
		tl.Contract = c
		_, err := tool.NewCatalog(tl)
		return err
	}
	tests := []struct {
		reason string
		c      *tool.Contract
		want   string
	}{
		{"MaxAge without Provenance could never tell an age", &tool.Contract{MaxAge: time.Minute}, "MaxAge needs Provenance"},
		{"a negative MaxAge", &tool.Contract{MaxAge: -1, Provenance: func(any) evidence.Provenance { return evidence.Provenance{} }}, "negative MaxAge"},
		{"Paging without Next", &tool.Contract{Paging: &tool.Paging{Param: "cursor"}}, "Paging needs Next and Param"},
		{"Paging naming no parameter", &tool.Contract{Paging: &tool.Paging{Next: func(any) string { return "" }, Param: "page"}}, `Paging.Param "page"`},
		{"Async without Poll", &tool.Contract{Async: &tool.Async{Pending: func(any) (string, bool) { return "", false }, Param: "job"}}, "Async needs Pending, Poll and Param"},
		{"Async polling a tool not in the catalog", &tool.Contract{Async: &tool.Async{Pending: func(any) (string, bool) { return "", false }, Poll: "nope", Param: "job"}}, `Async.Poll names "nope"`},
		{"Async naming a parameter the poll tool lacks", &tool.Contract{Async: &tool.Async{Pending: func(any) (string, bool) { return "", false }, Poll: "list_sites", Param: "job"}}, `Async.Param "job"`},
		{"an unknown empty policy", &tool.Contract{Empty: 9}, "unknown Empty policy"},
	}
	for _, tt := range tests {
		err := mk(tt.c)
		if assert.Errorf(t, err, "%s", tt.reason) {
			assert.Containsf(t, err.Error(), tt.want, "%s", tt.reason)
		}
	}
	assert.NoError(t, mk(&tool.Contract{Async: &tool.Async{Pending: func(any) (string, bool) { return "", false }, Poll: "list_sites", Param: "cursor"}}),
		"a tool may poll itself")
}

func TestEvidence_Provenance(t *testing.T) {
	at := time.Date(2025, 5, 4, 3, 2, 1, 0, time.UTC)
	fetched := time.Date(2025, 5, 4, 1, 0, 0, 0, time.UTC)
	read := &tool.Tool{Name: "search", Contract: &tool.Contract{Provenance: func(r any) evidence.Provenance {
		m := r.(map[string]string)
		if m["boom"] != "" {
			panic("boom")
		}
		return evidence.Provenance{Source: m["url"], ObjectID: m["id"], Version: m["v"], FetchedAt: fetched, IdempotencyKey: "made-up"}
	}}}
	tests := []struct {
		reason string
		call   invoker.Call
		obs    observation.Observation
		want   evidence.Provenance
	}{
		{"a read: what the contract says", invoker.Call{ID: "c1", Name: "search", Tool: read},
			observation.Success("ok", map[string]string{"url": "https://example.com/a", "id": "doc-1", "v": "7"}),
			evidence.Provenance{FetchedAt: fetched, Source: "https://example.com/a", ObjectID: "doc-1", Version: "7", IdempotencyKey: "made-up"}},
		{"a write: the write gate's key wins over anything the result says", invoker.Call{ID: "c2", Name: "search", Tool: read, IdempotencyKey: "run/search/k"},
			observation.Success("ok", map[string]string{"url": "u"}),
			evidence.Provenance{FetchedAt: fetched, Source: "u", IdempotencyKey: "run/search/k"}},
		{"a contract that panics says nothing; the time is the guard's", invoker.Call{ID: "c3", Name: "search", Tool: read},
			observation.Success("ok", map[string]string{"boom": "1"}), evidence.Provenance{FetchedAt: at}},
		{"a failure: only when, never what a failure body claims", invoker.Call{ID: "c4", Name: "search", Tool: read},
			observation.Failed(errcode.ToolUnavailable, "down", "later", map[string]string{"url": "u"}), evidence.Provenance{FetchedAt: at}},
		{"a tool without a contract: when", invoker.Call{ID: "c5", Name: "plain", Tool: &tool.Tool{Name: "plain"}},
			observation.Success("ok", nil), evidence.Provenance{FetchedAt: at}},
	}
	for _, tt := range tests {
		l := evidence.NewMemory()
		var ex invoker.Execution
		tt.call.Run, tt.call.Attempt, tt.call.Args, tt.call.Execution = "r", 1, json.RawMessage(`{}`), &ex
		_, err := guard.Evidence(guard.EvidenceOptions{Ledger: l, Now: func() time.Time { return at }})(context.Background(), tt.call,
			func(context.Context, invoker.Call) (observation.Observation, error) { return tt.obs, nil })
		require.NoError(t, err)
		rec, _, err := l.Lookup(context.Background(), "r", tt.call.ID)
		require.NoError(t, err)
		assert.Equalf(t, tt.want, rec.Provenance, "%s: the record", tt.reason)
		assert.Equalf(t, tt.want, ex.Provenance, "%s: the execution account (the call report)", tt.reason)
	}
}

func TestParamContract_StepSource(t *testing.T) {
	ctx := context.Background()
	book := &tool.Tool{Name: "book_hotel", Params: map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}}
	l := evidence.NewMemory()
	require.NoError(t, l.Append(ctx, "r", evidence.Record{CallID: evidence.StepRef("search"), Tool: evidence.StepRef("search"),
		Outcome: outcome.Success, Attempt: 1, Payload: json.RawMessage(`{"hotel_id":"h-1","city":"Bern"}`)}))
	require.NoError(t, l.Append(ctx, "r", evidence.Record{CallID: "c0", Tool: "list_hotels",
		Outcome: outcome.Success, Attempt: 1, Payload: json.RawMessage(`{"hotels":[{"hotel_id":"h-2"}]}`)}))
	require.NoError(t, l.AddUserText(ctx, "r", "book h-3 for me"))
	send := func(run, args string) observation.Observation {
		obs, err := guard.ParamContract(guard.ParamContractOptions{Ledger: l})(ctx,
			invoker.Call{ID: "c1", Name: "book_hotel", Tool: book, Run: run, Args: json.RawMessage(args)},
			func(context.Context, invoker.Call) (observation.Observation, error) {
				return observation.Success("booked", nil), nil
			})
		require.NoError(t, err)
		return obs
	}
	tests := []struct {
		reason string
		run    string
		args   string
		code   errcode.Code
	}{
		{"the value the earlier step verified passes", "r", `{"hotel_id":"h-1"}`, 0},
		{"a value of this step's own tool result is not the earlier step's output", "r", `{"hotel_id":"h-2"}`, errcode.ParamProvenanceMismatch},
		{"the user's words are not the earlier step's output", "r", `{"hotel_id":"h-3"}`, errcode.ParamProvenanceMismatch},
		{"another output of the step is not this one", "r", `{"hotel_id":"Bern"}`, errcode.ParamProvenanceMismatch},
		{"an invented value", "r", `{"hotel_id":"h-999"}`, errcode.ParamProvenanceMismatch},
		{"a run that did not receive the step's outputs", "other", `{"hotel_id":"h-1"}`, errcode.ParamProvenanceStepMissing},
	}
	for _, tt := range tests {
		obs := send(tt.run, tt.args)
		assert.Equalf(t, tt.code, obs.Code(), "%s: %v", tt.reason, obs)
		if tt.code != 0 {
			assert.Equalf(t, outcome.Rejected, obs.Outcome(), "%s", tt.reason)
			assert.Containsf(t, obs.Message(), "output hotel_id of step search", "%s: the source is named", tt.reason)
		}
	}
	assert.True(t, strings.Contains(send("other", `{"hotel_id":"h-1"}`).Next(), "builtin_node_follow_up"), "the step cannot get the value: tell the user or fail")
}

// The freshness bound of a latest requirement: a result exactly MaxAge old
// is still fresh and a second more is stale; a contract without MaxAge
// (0) bounds no age, however old the fetch time its Provenance reads.
func TestResponseContract_FreshnessBounds(t *testing.T) {
	unbounded := *pageContract
	unbounded.MaxAge = 0
	tests := []struct {
		reason   string
		contract *tool.Contract
		fetched  time.Time
		stale    bool
	}{
		{"exactly MaxAge old is fresh", pageContract, bizNow.Add(-15 * time.Minute), false},
		{"a second past MaxAge is stale", pageContract, bizNow.Add(-15*time.Minute - time.Second), true},
		{"without MaxAge a day-old result is not stale", &unbounded, bizNow.Add(-24 * time.Hour), false},
		{"without MaxAge a result fetched a second ago is not stale", &unbounded, bizNow.Add(-time.Second), false},
	}
	for _, tt := range tests {
		tl := bizTool(t, tt.contract)
		obs, ex := bizSend(t, prompt.English, tl, tool.RequireLatest, page{Items: []string{"s-1"}, Fetched: tt.fetched})
		assert.Equalf(t, outcome.Success, obs.Outcome(), "%s: %v", tt.reason, obs)
		assert.Equalf(t, tt.stale, ex.Insufficient, "%s: Execution.Insufficient", tt.reason)
		if tt.stale {
			assert.Containsf(t, obs.Message(), "older than the 15m0s allowed", "%s", tt.reason)
		} else {
			assert.Equalf(t, "list_sites succeeded", obs.Message(), "%s: the success stands unchanged", tt.reason)
		}
	}
}
