package react

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/threadstore"
)

// InThread makes a call of [Loop.Run] (or [Loop.RunStream]) answer the
// next message of thread id, kept in Config.Threads: the run's prompt
// holds the thread's earlier turns that the loop's [HistoryPolicy] keeps
// (and the host's summary of the others), its guards also accept, as
// sources, what the user said and what tools returned in every earlier
// turn (the thread's evidence, see package threadstore), and when it ends
// its turn is committed to the thread. The thread is created, owned by the
// run's owner ([WithOwner]), by its first message; a later message must
// come from the same owner ([ErrNotOwner]). One message at a time: while
// a run holds the thread — answering, or stopped to wait for a person's
// decision — another message is refused with a [ThreadBusyError]. A run
// that suspends inside a thread keeps it, and its resume ([Loop.Resume],
// [Loop.ResumeRun]) goes on in it: the thread is sealed into the run's
// snapshot. Resume and the other calls that take options ignore
// InThread. An id that is empty, not valid UTF-8 or longer than
// threadstore.MaxID bytes is refused by Run.
func InThread(id string) RunOption {
	return func(r *runOptions) { r.thread, r.inThread = id, true }
}

// Errors of runs in threads.
var (
	// ErrNoThreadStore: [InThread] was given to a loop without
	// Config.Threads.
	ErrNoThreadStore = errors.New("react: Config.Threads is not set")
	// ErrThreadBusy is wrapped by [ThreadBusyError].
	ErrThreadBusy = errors.New("react: the thread is busy")
	// ErrThreadMoved: a run stopped inside a thread was resumed, but the
	// thread went on without it (it was let go with [Loop.ReleaseThread]
	// and another message was answered since, or the thread was deleted
	// and started again): its message can no longer be answered there.
	// Nothing runs; the snapshot stays unspent.
	ErrThreadMoved = errors.New("react: the thread went on without this run")
	// ErrThreadNotFound: [Loop.Turns] or [Loop.ReleaseThread] of a thread
	// the store does not hold.
	ErrThreadNotFound = errors.New("react: no thread with that id")
)

// ThreadBusyError is the error (wrapping [ErrThreadBusy]) of a message to
// a thread that another run holds: nothing ran. Run is the run that holds
// it. When Waiting, that run stopped and waits for a person's decision (or
// a Continue after an interruption): resume it ([Loop.ResumeRun]), and the
// thread is free once it ended; a run that will never be resumed is let go
// with [Loop.ReleaseThread]. Otherwise it is answering a message now: send
// the new one when it returned.
type ThreadBusyError struct {
	Thread  string
	Run     string
	Waiting bool
}

func (e *ThreadBusyError) Error() string {
	if e.Waiting {
		return fmt.Sprintf("%v: run %s of thread %s waits for a decision; resume it (or release the thread) before the next message", ErrThreadBusy, e.Run, e.Thread)
	}
	return fmt.Sprintf("%v: run %s is answering a message of thread %s; send the next one when it returned", ErrThreadBusy, e.Run, e.Thread)
}

// Unwrap returns [ErrThreadBusy].
func (e *ThreadBusyError) Unwrap() error { return ErrThreadBusy }

// threadRun is what a run in a thread keeps of it.
type threadRun struct {
	id         string
	token      string    // the lease; "" while the run does not hold the thread
	turn       int       // the run's turn index in the thread
	from       int       // the first earlier turn in the prompt (turn when none)
	hist       []Message // what precedes the run's own messages in the prompt
	summary    string    // the summary in the prompt; "" when none is shown
	summarized int       // the turns the summary covers
	newSummary bool      // the summary was made for this message: commit it with the turn
	first      int64     // input tokens of the run's first model call; -1 before it
	last       int64     // input and output tokens of its latest model call
	unmeasured bool      // a model call reported no usage: the turn's tokens are estimated
	req        []Message // the request's messages, reused between rounds
	done       bool      // the lease was committed, parked or released
}

// enterThread takes thread id for the new run r (Run with InThread) and
// builds the history its prompt starts with.
func (l *Loop) enterThread(ctx context.Context, r *run, id string) error {
	if l.threads == nil {
		return ErrNoThreadStore
	}
	if err := threadstore.CheckID(id); err != nil {
		return fmt.Errorf("react: InThread: %w", err)
	}
	l.retryThread(ctx, id)
	th, token, err := l.acquire(ctx, id, r.owner, r.id)
	if err != nil {
		return err
	}
	t := &threadRun{id: id, token: token, turn: th.Turns + 1, first: -1, last: -1}
	if err := l.buildHistory(ctx, th, t); err != nil {
		if rerr := l.threads.Release(context.WithoutCancel(ctx), id, r.id, token); rerr != nil {
			err = errors.Join(err, fmt.Errorf("react: thread store: release %s: %w", id, rerr))
		}
		return err
	}
	r.thread = t
	return nil
}

// reenterThread takes the thread of the resumed run r again and rebuilds
// the history its prompt started with.
func (l *Loop) reenterThread(ctx context.Context, r *run) error {
	t := r.thread
	if l.threads == nil {
		return fmt.Errorf("%w: run %s answers a message of thread %s", ErrNoThreadStore, r.id, t.id)
	}
	th, token, err := l.acquire(ctx, t.id, r.owner, r.id)
	if err != nil {
		return err
	}
	t.token = token
	if th.Turns != t.turn-1 {
		t.done = true
		if rerr := l.threads.Release(context.WithoutCancel(ctx), t.id, r.id, token); rerr != nil {
			err = fmt.Errorf("react: thread store: release %s: %w", t.id, rerr)
		}
		return errors.Join(fmt.Errorf("%w: run %s answers turn %d of thread %s, which holds %d turns", ErrThreadMoved, r.id, t.turn, t.id, th.Turns), err)
	}
	hist, err := l.historyMessages(ctx, th, t.from, t.turn, t.summary, t.summarized)
	if err != nil {
		return err
	}
	t.hist = hist
	return nil
}

// acquire takes thread id for run. A thread that a stopped run holds which
// Config.Runs no longer holds (it expired, or it ended and its turn was
// lost with its process) is freed first: that run will not be resumed.
func (l *Loop) acquire(ctx context.Context, id string, owner Owner, run string) (threadstore.Thread, string, error) {
	th, token, err := l.threads.Acquire(ctx, id, owner, run)
	if errors.Is(err, threadstore.ErrBusy) && l.runs != nil && th.Run != "" && th.Run != run {
		if _, kept, gerr := l.runs.Get(ctx, th.Run); gerr == nil && !kept {
			if rerr := l.threads.Release(ctx, id, th.Run, ""); rerr == nil {
				th, token, err = l.threads.Acquire(ctx, id, owner, run)
			}
		}
	}
	switch {
	case err == nil:
		return th, token, nil
	case errors.Is(err, threadstore.ErrBusy):
		return th, "", &ThreadBusyError{Thread: id, Run: th.Run, Waiting: !th.Held}
	case errors.Is(err, threadstore.ErrNotOwner):
		return th, "", fmt.Errorf("%w: thread %s is another owner's; the caller acts as %s", ErrNotOwner, id, owner)
	}
	return th, "", fmt.Errorf("react: thread store: acquire %s: %w", id, err)
}

// historyPage is how many turns buildHistory reads at a time.
const historyPage = 32

// buildHistory chooses the earlier turns of th that the message's prompt
// holds (the most recent that fit the policy), has the turns that left the
// window summarized when the policy says so, and builds the messages.
func (l *Loop) buildHistory(ctx context.Context, th threadstore.Thread, t *threadRun) error {
	p := &l.history
	limit := p.maxTurns()
	kept, tokens := 0, 0
	hi := t.turn // exclusive
	for hi > 1 && kept < limit {
		lo := max(1, hi-min(historyPage, limit-kept))
		page, err := l.threads.Turns(ctx, th.ID, lo, hi)
		if err != nil {
			return fmt.Errorf("react: thread store: turns of %s: %w", th.ID, err)
		}
		if len(page) != hi-lo {
			return fmt.Errorf("%w: thread %q holds %d turns, but turns %d to %d are not all there", ErrThreadCorrupt, th.ID, th.Turns, lo, hi-1)
		}
		fits := true
		for i := len(page) - 1; i >= 0 && fits; i-- {
			if p.MaxTokens > 0 && tokens+page[i].Tokens > p.MaxTokens {
				fits = false
				break
			}
			kept++
			tokens += page[i].Tokens
		}
		if !fits {
			break
		}
		hi = lo
	}
	t.from = t.turn - kept
	summary, summarized := "", th.Summarized
	if summarized > 0 {
		s, err := l.openSummary(th.ID, th.Owner, summarized, th.Summary)
		if err != nil {
			return err
		}
		summary = s
	}
	if p.Summarize != nil && t.from-1 > summarized {
		s, err := l.summarize(ctx, th, summary, summarized, t.from-1)
		if err != nil {
			return err
		}
		summary, summarized, t.newSummary = s, t.from-1, true
	}
	t.summary, t.summarized = summary, summarized
	hist, err := l.historyMessages(ctx, th, t.from, t.turn, summary, summarized)
	if err != nil {
		return err
	}
	t.hist = hist
	return nil
}

// summarize asks the policy's Summarizer for the summary of the turns up
// to through, from the summary of the turns up to done.
func (l *Loop) summarize(ctx context.Context, th threadstore.Thread, summary string, done, through int) (string, error) {
	for done < through {
		hi := min(done+SummaryBatch, through) + 1
		stored, err := l.threads.Turns(ctx, th.ID, done+1, hi)
		if err != nil {
			return "", fmt.Errorf("react: thread store: turns of %s: %w", th.ID, err)
		}
		if len(stored) != hi-done-1 {
			return "", fmt.Errorf("%w: thread %q: turns %d to %d are not all there", ErrThreadCorrupt, th.ID, done+1, hi-1)
		}
		turns := make([]Turn, len(stored))
		for i, st := range stored {
			w, err := l.openTurn(th.ID, th.Owner, st.Index, st.Content)
			if err != nil {
				return "", err
			}
			turns[i] = publicTurn(w, st.Tokens, st.At)
		}
		s, err := l.history.Summarize(ctx, summary, turns)
		if err != nil {
			return "", fmt.Errorf("react: HistoryPolicy.Summarize (turns %d to %d of thread %s): %w", done+1, hi-1, th.ID, err)
		}
		summary, done = validText(s), hi-1
	}
	return summary, nil
}

// historyMessages returns the prompt's history of a message of turn: the
// summary (or a note that earlier turns are left out), then turns from to
// turn-1.
func (l *Loop) historyMessages(ctx context.Context, th threadstore.Thread, from, turn int, summary string, summarized int) ([]Message, error) {
	var hist []Message
	switch {
	case from <= 1:
	case summary != "" && summarized > 0:
		hist = append(hist, Message{Role: RoleUser, Content: l.cat.Text(prompt.HistorySummary, "count", strconv.Itoa(summarized), "summary", summary)})
	default:
		hist = append(hist, Message{Role: RoleUser, Content: l.cat.Text(prompt.HistoryOmitted, "count", strconv.Itoa(from-1))})
	}
	if from >= turn {
		return hist, nil
	}
	stored, err := l.threads.Turns(ctx, th.ID, from, turn)
	if err != nil {
		return nil, fmt.Errorf("react: thread store: turns of %s: %w", th.ID, err)
	}
	if len(stored) != turn-from {
		return nil, fmt.Errorf("%w: thread %q: turns %d to %d are not all there", ErrThreadCorrupt, th.ID, from, turn-1)
	}
	for _, st := range stored {
		w, err := l.openTurn(th.ID, th.Owner, st.Index, st.Content)
		if err != nil {
			return nil, err
		}
		hist = append(hist, fromWire(w.Messages)[1:]...)
	}
	return hist, nil
}

// prompt returns the messages of the next model call: the run's own,
// after the thread's history when the run answers a message of a thread.
func (r *run) prompt() []Message {
	t := r.thread
	if t == nil || len(t.hist) == 0 {
		return r.msgs
	}
	t.req = append(t.req[:0], r.msgs[0])
	t.req = append(t.req, t.hist...)
	t.req = append(t.req, r.msgs[1:]...)
	return t.req
}

// observeUsage records the token usage of a model call of a run in a
// thread, from which the turn's tokens are counted.
func (t *threadRun) observeUsage(u *Usage) {
	if u == nil {
		t.unmeasured = true
		return
	}
	if t.first < 0 {
		t.first = u.InputTokens
	}
	t.last = u.InputTokens + u.OutputTokens
}

// turnTokens is what the run's messages cost in a later prompt: counted by
// the policy's Tokens; else from the usage the provider reported (the
// growth of the prompt from the first call to the end of the last answer,
// plus the user's message and the messages after the last answer, which
// no call saw); else estimated.
func (r *run) turnTokens() int {
	p := &r.l.history
	msgs := r.msgs[1:]
	if p.Tokens != nil {
		return p.tokensOf(msgs...)
	}
	t := r.thread
	if !t.unmeasured && t.first >= 0 && t.last >= t.first {
		n := int(t.last-t.first) + estimateTokens(msgs[0])
		for i := len(msgs) - 1; i > 0 && msgs[i].Role != RoleAssistant; i-- {
			n += estimateTokens(msgs[i])
		}
		return n
	}
	return p.tokensOf(msgs...)
}

// threadCommit is a turn on its way to the thread store, kept until the
// store took it.
type threadCommit struct {
	thread, token string
	records       []evidence.Record // the run's evidence, its call ids marked
	texts         []string          // the user's words of the run
	evidenced     bool              // records and texts are in the thread's evidence
	turn          threadstore.Turn
	summary       *threadstore.Summary
}

// commitThread commits the turn of a run that ended: its evidence, marked,
// into the thread's, then the sealed turn, which frees the thread. A
// failure is kept and tried again at this Loop's next call, and before
// the next message to the thread.
func (r *run) commitThread(ctx context.Context) error {
	t, l := r.thread, r.l
	t.done = true
	ctx = context.WithoutCancel(ctx)
	recs, err := l.ledger.Records(ctx, r.id)
	if err != nil {
		return l.releaseThread(ctx, t, r.id, fmt.Errorf("react: evidence of run %s for thread %s: %w", r.id, t.id, err))
	}
	for i := range recs {
		recs[i].CallID = earlierCallID(t.turn, recs[i].CallID)
	}
	w := wireTurn{Thread: t.id, Index: t.turn, Run: r.id, Owner: r.owner, Status: r.status, Answer: answerOf(r.status, r.summary),
		Messages: toWire(markCalls(t.turn, r.msgs[1:])), UserTexts: r.userTexts}
	content, err := sealAs(l, turnFormat, &w)
	if err != nil {
		return l.releaseThread(ctx, t, r.id, fmt.Errorf("react: seal turn %d of thread %s: %w", t.turn, t.id, err))
	}
	c := &threadCommit{thread: t.id, token: t.token, records: recs, texts: r.userTexts,
		turn: threadstore.Turn{Index: t.turn, Run: r.id, Tokens: r.turnTokens(), Content: content}}
	if t.newSummary {
		sum, err := sealAs(l, summaryFormat, &wireSummary{Thread: t.id, Through: t.summarized, Owner: r.owner, Text: t.summary})
		if err != nil {
			return l.releaseThread(ctx, t, r.id, fmt.Errorf("react: seal the summary of thread %s: %w", t.id, err))
		}
		c.summary = &threadstore.Summary{Content: sum, Through: t.summarized}
	}
	return l.commit(ctx, c)
}

// commit writes c; a failure other than a lost lease is kept for a retry.
func (l *Loop) commit(ctx context.Context, c *threadCommit) error {
	if !c.evidenced {
		ev := l.threads.Evidence()
		for _, rec := range c.records {
			if err := ev.Append(ctx, c.thread, rec); err != nil {
				l.threadOps.Put(c.thread, c)
				return fmt.Errorf("react: thread store: evidence of thread %s: %w", c.thread, err)
			}
		}
		for _, text := range c.texts {
			if err := ev.AddUserText(ctx, c.thread, text); err != nil {
				l.threadOps.Put(c.thread, c)
				return fmt.Errorf("react: thread store: evidence of thread %s: %w", c.thread, err)
			}
		}
		c.evidenced = true
	}
	err := l.threads.Commit(ctx, c.thread, c.token, c.turn, c.summary)
	switch {
	case err == nil, errors.Is(err, threadstore.ErrLeaseLost), errors.Is(err, threadstore.ErrTurn), errors.Is(err, threadstore.ErrInvalid):
		l.threadOps.DeleteIf(c.thread, func(p *threadCommit) bool { return p == c })
	default:
		l.threadOps.Put(c.thread, c)
	}
	if err != nil {
		return fmt.Errorf("react: thread store: commit turn %d of thread %s: %w", c.turn.Index, c.thread, err)
	}
	return nil
}

// retryThread tries again a commit to thread id that failed.
func (l *Loop) retryThread(ctx context.Context, id string) {
	if c, ok := l.threadOps.Get(id); ok {
		_ = l.commit(context.WithoutCancel(ctx), c)
	}
}

// releaseThread frees the thread of a run whose turn cannot be committed,
// and returns cause joined with any error of the store.
func (l *Loop) releaseThread(ctx context.Context, t *threadRun, run string, cause error) error {
	t.done = true
	if err := l.threads.Release(context.WithoutCancel(ctx), t.id, run, t.token); err != nil {
		return errors.Join(cause, fmt.Errorf("react: thread store: release %s: %w", t.id, err))
	}
	return cause
}

// parkThread leaves the thread with the run, which stopped to wait.
func (r *run) parkThread(ctx context.Context) error {
	t := r.thread
	t.done = true
	if t.token == "" {
		return nil
	}
	if err := r.l.threads.Park(context.WithoutCancel(ctx), t.id, t.token); err != nil {
		return fmt.Errorf("react: thread store: park %s: %w", t.id, err)
	}
	return nil
}

// threadEnd hands the thread on when the run stops with res: a finished
// or failed run commits its turn, a stopped run with a snapshot parks the
// thread, a stopped run without one (it could not be sealed) frees it.
func (r *run) threadEnd(ctx context.Context, res Result) error {
	if r.thread == nil || r.thread.done {
		return nil
	}
	switch {
	case res.Status == Finished || res.Status == Failed:
		return r.commitThread(ctx)
	case res.Snapshot != nil:
		return r.parkThread(ctx)
	}
	return r.l.releaseThread(ctx, r.thread, r.id, nil)
}

// leaveThread gives up the lease of a run that did not stop through
// threadEnd (a panic, a resume that could not apply its decision): a new
// run frees the thread, a resumed one parks it again (its snapshot stays
// resumable).
func (r *run) leaveThread(ctx context.Context, resumed bool) {
	t := r.thread
	if t == nil || t.done || t.token == "" {
		return
	}
	if resumed {
		_ = r.parkThread(ctx)
		return
	}
	_ = r.l.releaseThread(ctx, t, r.id, nil)
}

// scope puts the thread's evidence in reach of the run's lookups.
func (r *run) scope(ctx context.Context) context.Context {
	if r.thread == nil {
		return ctx
	}
	return withThreadScope(ctx, &threadScope{run: r.id, thread: r.thread.id, ledger: r.l.threads.Evidence()})
}

// MaxTurnsRead bounds the turns one call of [Loop.Turns] returns.
const MaxTurnsRead = 1000

// Turns returns the turns of thread id whose index is in [from, to), at
// most [MaxTurnsRead], read from their sealed form (the errors wrapping
// [ErrThreadCorrupt] say what did not open): what a host shows of a
// conversation. The caller's owner ([WithOwner]) must cover the thread's
// ([ErrNotOwner]); a thread the store does not hold is [ErrThreadNotFound].
func (l *Loop) Turns(ctx context.Context, id string, from, to int, opts ...RunOption) ([]Turn, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w (Turns)", ErrNilContext)
	}
	th, err := l.thread(ctx, id, applyOptions(opts))
	if err != nil {
		return nil, err
	}
	from = max(from, 1)
	to = min(to, th.Turns+1, from+MaxTurnsRead)
	if from >= to {
		return nil, nil
	}
	stored, err := l.threads.Turns(ctx, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("react: thread store: turns of %s: %w", id, err)
	}
	out := make([]Turn, 0, len(stored))
	for _, st := range stored {
		w, err := l.openTurn(id, th.Owner, st.Index, st.Content)
		if err != nil {
			return nil, err
		}
		out = append(out, publicTurn(w, st.Tokens, st.At))
	}
	return out, nil
}

// ReleaseThread frees thread id from the stopped run that holds it — a run
// suspended or interrupted inside the thread whose decision will not come
// — or from a driver that died, so that the next message can start. That
// run's message gets no turn; once another message was answered, a resume
// of it is refused with [ErrThreadMoved] (before, it takes the thread
// again, which nobody used). A free thread is left as it is; a thread whose run is
// answering a message now is a [ThreadBusyError]. The caller's owner
// ([WithOwner]) must cover the thread's. (With Config.Runs, a message to a
// thread whose stopped run the run store no longer holds frees it by
// itself.)
func (l *Loop) ReleaseThread(ctx context.Context, id string, opts ...RunOption) error {
	if ctx == nil {
		return fmt.Errorf("%w (ReleaseThread)", ErrNilContext)
	}
	th, err := l.thread(ctx, id, applyOptions(opts))
	if err != nil {
		return err
	}
	if th.Run == "" {
		return nil
	}
	err = l.threads.Release(ctx, id, th.Run, "")
	if errors.Is(err, threadstore.ErrBusy) {
		return &ThreadBusyError{Thread: id, Run: th.Run}
	}
	if err != nil {
		return fmt.Errorf("react: thread store: release %s: %w", id, err)
	}
	return nil
}

// thread returns thread id for a caller acting as o.owner.
func (l *Loop) thread(ctx context.Context, id string, o runOptions) (threadstore.Thread, error) {
	if l.threads == nil {
		return threadstore.Thread{}, ErrNoThreadStore
	}
	th, ok, err := l.threads.Get(ctx, id)
	if err != nil {
		return threadstore.Thread{}, fmt.Errorf("react: thread store: get %s: %w", id, err)
	}
	if !ok {
		return threadstore.Thread{}, fmt.Errorf("%w: %q", ErrThreadNotFound, id)
	}
	if !o.owner.Covers(th.Owner) {
		return threadstore.Thread{}, fmt.Errorf("%w: thread %s", ErrNotOwner, id)
	}
	return th, nil
}

// wireThread is the thread of a run, as its snapshot keeps it.
type wireThread struct {
	ID         string `json:"id"`
	Turn       int    `json:"turn"`
	From       int    `json:"from"`
	Summary    string `json:"summary,omitempty"`
	Summarized int    `json:"summarized,omitempty"`
	NewSummary bool   `json:"new_summary,omitempty"`
	First      int64  `json:"first_tokens"`
	Last       int64  `json:"last_tokens,omitempty"`
	Unmeasured bool   `json:"unmeasured,omitempty"`
}

func (t *threadRun) wire() *wireThread {
	if t == nil {
		return nil
	}
	return &wireThread{ID: t.id, Turn: t.turn, From: t.from, Summary: t.summary, Summarized: t.summarized, NewSummary: t.newSummary,
		First: t.first, Last: t.last, Unmeasured: t.unmeasured}
}

func (w *wireThread) run() *threadRun {
	if w == nil {
		return nil
	}
	return &threadRun{id: w.ID, turn: w.Turn, from: w.From, summary: w.Summary, summarized: w.Summarized, newSummary: w.NewSummary,
		first: w.First, last: w.Last, unmeasured: w.Unmeasured}
}

// check verifies a snapshot's thread.
func (w *wireThread) check() error {
	if w == nil {
		return nil
	}
	if err := threadstore.CheckID(w.ID); err != nil {
		return err
	}
	switch {
	case w.Turn < 1 || w.From < 1 || w.From > w.Turn:
		return fmt.Errorf("thread turn %d from %d", w.Turn, w.From)
	case w.Summarized < 0 || w.Summarized >= w.Turn || (w.Summary != "" && w.Summarized == 0):
		return fmt.Errorf("thread summary through %d of turn %d", w.Summarized, w.Turn)
	case w.First < -1 || w.Last < -1:
		return errors.New("negative token counts")
	}
	return nil
}
