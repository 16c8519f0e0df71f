package prompt

import "github.com/reactguard/reactguard/errcode"

// This file holds the texts of the business verdicts the response contract
// tells the model (freshness, paging, asynchronous jobs, walls, results
// that fall short), of step verification and of tasks of several steps.
// They are merged into the catalogs when the package is initialised, so
// that each catalog still holds every key (TestCatalogParity).

// Business verdicts of a result that executed (the response contract).
const (
	BusinessNote         Key = 220 // BUSINESS_NOTE: "business status {status}: {reason}; {retry}. Next: {next}"
	RetryHelps           Key = 221 // RETRY_HELPS: calling the tool again can help
	RetryUseless         Key = 222 // RETRY_USELESS: calling it again with the same arguments cannot help
	ReasonStale          Key = 224 // REASON_STALE: the result is {age} old, older than {max}
	NextStale            Key = 226 // NEXT_STALE: call {tool} again for fresh data, or say the data may be out of date
	ReasonMorePages      Key = 227 // REASON_MORE_PAGES: the result is one page of several
	NextMorePages        Key = 228 // NEXT_MORE_PAGES: call {tool} again with {param}={cursor}
	ReasonAccepted       Key = 229 // REASON_ACCEPTED: {tool} accepted the request as job {job}; not done yet
	NextPoll             Key = 230 // NEXT_POLL: call {poll} with {param} {job}; do not say it is done before
	ReasonInsufficient   Key = 231 // REASON_INSUFFICIENT: the result does not serve the goal: {detail}
	NextInsufficient     Key = 232 // NEXT_INSUFFICIENT: do not treat the result as enough
	ReasonEmptyAnswer    Key = 233 // REASON_EMPTY_ANSWER: the empty result is the answer: nothing matches
	NextEmptyAnswer      Key = 234 // NEXT_EMPTY_ANSWER: report that nothing matches
	ReasonEmptyResult    Key = 235 // REASON_EMPTY_RESULT: the result of {tool} is empty
	StatusInsufficient   Key = 236 // STATUS_INSUFFICIENT: the business status "insufficient", in words
	StatusAccepted       Key = 237 // STATUS_ACCEPTED: the business status "accepted", in words
	StatusAnswered       Key = 238 // STATUS_ANSWERED: an empty result that is the answer, in words
	NextBlockedRate      Key = 239 // NEXT_BLOCKED_RATE: a rate wall: try later or another source
	SourceStep           Key = 410 // SOURCE_STEP: output {key} of step {step}, filled into {source}
	WallCaptcha          Key = 550 // WALL_CAPTCHA: {wall} of TOOL_BLOCKED: a captcha
	WallLogin            Key = 551 // WALL_LOGIN: {wall} of TOOL_BLOCKED: a login page
	WallRate             Key = 552 // WALL_RATE: {wall} of TOOL_BLOCKED: a rate-limit page
	NextBlocked          Key = 553 // NEXT_BLOCKED: a person must get past the wall; tell the user or use another source
	NextStepMissing      Key = 554 // NEXT_STEP_MISSING: the step lacks an earlier step's output (PARAM_PROVENANCE_STEP_MISSING)
	StepCheckNote        Key = 555 // STEP_CHECK_NOTE: "step check: {status}: {reason}. Next: {next}"
	StepCheckPassed      Key = 556 // STEP_CHECK_PASSED: "step check: {status}"
	StepPending          Key = 557 // STEP_PENDING: 待执行
	StepInProgress       Key = 558 // STEP_IN_PROGRESS: 进行中
	StepSatisfied        Key = 559 // STEP_SATISFIED: 已满足
	StepInsufficient     Key = 560 // STEP_INSUFFICIENT: 信息不足
	StepBlocked          Key = 561 // STEP_BLOCKED: 被阻断
	StepFailed           Key = 562 // STEP_FAILED: 失败
	NextStepUnsatisfied  Key = 563 // NEXT_STEP_UNSATISFIED: do what the check asks, or fail
	InputsHeader         Key = 564 // INPUTS_HEADER: the verified outputs of earlier steps follow
	InputLine            Key = 565 // INPUT_LINE: "- {ref} (step {step}): {values}"
	StatusesHeader       Key = 566 // STATUSES_HEADER: the statuses of the task's steps follow
	StatusLine           Key = 567 // STATUS_LINE: "- {step}: {status}{detail}"
	MustSay              Key = 568 // MUST_SAY: what the answer must say about a missing step
	NextAnswerUnverified Key = 569 // NEXT_ANSWER_UNVERIFIED: do not state {value} as a fact (ANSWER_CLAIMS_UNVERIFIED)
	NextAnswerMissing    Key = 570 // NEXT_ANSWER_MISSING: say {text} in the answer (ANSWER_OMITS_MISSING)
	ReasonModelWord      Key = 571 // REASON_MODEL_WORD: the step finished on the model's word alone
	JudgeSystem          Key = 572 // JUDGE_SYSTEM: the system prompt of a model judging a step with {rubric}
	JudgeUser            Key = 573 // JUDGE_USER: what the judge is shown: {step}, {task}, {evidence}, {answer}
	ReasonJudgeUnread    Key = 574 // REASON_JUDGE_UNREAD: the judge's answer could not be read: {detail}
	ReasonJudgeNoCite    Key = 575 // REASON_JUDGE_NO_CITE: the judge cited no result of the step
	ReasonStepLimit      Key = 577 // REASON_STEP_LIMIT: the task reached its limit of {max} steps
	ReasonStepNotRun     Key = 578 // REASON_STEP_NOT_RUN: no branch of the task led to the step
	ReasonOutputMissing  Key = 580 // REASON_OUTPUT_MISSING: the step did not verify output {key}
)

var taskNames = map[Key]string{
	BusinessNote:         "BUSINESS_NOTE",
	RetryHelps:           "RETRY_HELPS",
	RetryUseless:         "RETRY_USELESS",
	ReasonStale:          "REASON_STALE",
	NextStale:            "NEXT_STALE",
	ReasonMorePages:      "REASON_MORE_PAGES",
	NextMorePages:        "NEXT_MORE_PAGES",
	ReasonAccepted:       "REASON_ACCEPTED",
	NextPoll:             "NEXT_POLL",
	ReasonInsufficient:   "REASON_INSUFFICIENT",
	NextInsufficient:     "NEXT_INSUFFICIENT",
	ReasonEmptyAnswer:    "REASON_EMPTY_ANSWER",
	NextEmptyAnswer:      "NEXT_EMPTY_ANSWER",
	ReasonEmptyResult:    "REASON_EMPTY_RESULT",
	StatusInsufficient:   "STATUS_INSUFFICIENT",
	StatusAccepted:       "STATUS_ACCEPTED",
	StatusAnswered:       "STATUS_ANSWERED",
	NextBlockedRate:      "NEXT_BLOCKED_RATE",
	SourceStep:           "SOURCE_STEP",
	WallCaptcha:          "WALL_CAPTCHA",
	WallLogin:            "WALL_LOGIN",
	WallRate:             "WALL_RATE",
	NextBlocked:          "NEXT_BLOCKED",
	NextStepMissing:      "NEXT_STEP_MISSING",
	StepCheckNote:        "STEP_CHECK_NOTE",
	StepCheckPassed:      "STEP_CHECK_PASSED",
	StepPending:          "STEP_PENDING",
	StepInProgress:       "STEP_IN_PROGRESS",
	StepSatisfied:        "STEP_SATISFIED",
	StepInsufficient:     "STEP_INSUFFICIENT",
	StepBlocked:          "STEP_BLOCKED",
	StepFailed:           "STEP_FAILED",
	NextStepUnsatisfied:  "NEXT_STEP_UNSATISFIED",
	InputsHeader:         "INPUTS_HEADER",
	InputLine:            "INPUT_LINE",
	StatusesHeader:       "STATUSES_HEADER",
	StatusLine:           "STATUS_LINE",
	MustSay:              "MUST_SAY",
	NextAnswerUnverified: "NEXT_ANSWER_UNVERIFIED",
	NextAnswerMissing:    "NEXT_ANSWER_MISSING",
	ReasonModelWord:      "REASON_MODEL_WORD",
	JudgeSystem:          "JUDGE_SYSTEM",
	JudgeUser:            "JUDGE_USER",
	ReasonJudgeUnread:    "REASON_JUDGE_UNREAD",
	ReasonJudgeNoCite:    "REASON_JUDGE_NO_CITE",
	ReasonStepLimit:      "REASON_STEP_LIMIT",
	ReasonStepNotRun:     "REASON_STEP_NOT_RUN",
	ReasonOutputMissing:  "REASON_OUTPUT_MISSING",
}

var taskEnglish = map[Key]string{
	BusinessNote:         "business status {status}: {reason}; {retry}. Next: {next}",
	RetryHelps:           "calling it again can help",
	RetryUseless:         "calling it again with the same arguments cannot help",
	ReasonStale:          "the result of {tool} is {age} old, older than the {max} allowed for the latest data",
	NextStale:            "call {tool} again for fresh data; if it stays out of date, tell the user that the data may be outdated and when it was fetched",
	ReasonMorePages:      "the result of {tool} is one page and more pages follow, so it is not complete",
	NextMorePages:        "call {tool} again with {param} set to {cursor} to read the next page; the data is complete only after the last page",
	ReasonAccepted:       "{tool} accepted the request as job {job}; the job is not done yet",
	NextPoll:             "call {poll} with {param} {job} to check whether the job is done; do not tell the user it is done before a check says so",
	ReasonInsufficient:   "the result of {tool} does not serve the goal: {detail}",
	NextInsufficient:     "do not treat this result as enough: refine the call, use another source, or tell the user what is missing",
	ReasonEmptyAnswer:    "the empty result of {tool} is the answer: nothing matches",
	NextEmptyAnswer:      "report that nothing matches; do not search again for the same",
	ReasonEmptyResult:    "the result of {tool} is empty",
	StatusInsufficient:   "insufficient",
	StatusAccepted:       "accepted, not done",
	StatusAnswered:       "answered",
	NextBlockedRate:      "try again later or use another source; do not call {tool} again at once",
	SourceStep:           "output {key} of step {step}",
	WallCaptcha:          "a captcha",
	WallLogin:            "a login page",
	WallRate:             "a rate-limit page",
	NextBlocked:          "a person must get past it: tell the user with builtin_node_follow_up or use another source; do not call {tool} again the same way",
	NextStepMissing:      "this step cannot get {param}: tell the user with builtin_node_follow_up, or call builtin_node_fail with the reason",
	StepCheckNote:        "step check: {status}: {reason}. Next: {next}",
	StepCheckPassed:      "step check: {status}",
	StepPending:          "pending",
	StepInProgress:       "in progress",
	StepSatisfied:        "satisfied",
	StepInsufficient:     "insufficient",
	StepBlocked:          "blocked",
	StepFailed:           "failed",
	NextStepUnsatisfied:  "do what the step check asks, or call builtin_node_fail with the reason if the step cannot be done",
	InputsHeader:         "Verified outputs of earlier steps. Take parameters from them as the tools require; to copy one into an output, call builtin_output_set with sourceType tool_result and the sourceRef shown:",
	InputLine:            "- {ref} (step {step}): {values}",
	StatusesHeader:       "Status of the task's steps. Do not state as done what is not satisfied, and say what is missing:",
	StatusLine:           "- {step}: {status}{detail}",
	MustSay:              "; the answer must say: {text}",
	NextAnswerUnverified: "do not state {value} as a fact: say that step {step} is not verified, or leave the value out, then call builtin_node_finish again",
	NextAnswerMissing:    "say in the answer: {text}; then call builtin_node_finish again",
	ReasonModelWord:      "the step finished on the model's word alone: no required output or verifier confirms it",
	JudgeSystem: `You check whether one step of a task is done. You did not do the step; judge only from the results shown.
Rubric: {rubric}
Answer with one JSON object and nothing else, with the fields status ("satisfied", "insufficient", "blocked" or "failed"), reason (one sentence) and evidence (an array of the call ids of the results you relied on).
"satisfied" needs at least one call id in evidence.`,
	JudgeUser:           "Step: {step}\nTask: {task}\nResults of the step's tools:\n{evidence}\nThe step's answer: {answer}",
	ReasonJudgeUnread:   "the judge's answer could not be read: {detail}",
	ReasonJudgeNoCite:   "the judge cited no result of the step",
	ReasonStepLimit:     "the task reached its limit of {max} steps",
	ReasonStepNotRun:    "no branch of the task led to this step",
	ReasonOutputMissing: "the step did not verify output {key}",
}

var taskChinese = map[Key]string{
	BusinessNote:         "业务状态 {status}：{reason}；{retry}。下一步：{next}",
	RetryHelps:           "再次调用可能有帮助",
	RetryUseless:         "以相同参数再次调用没有帮助",
	ReasonStale:          "{tool} 的结果已有 {age}，超过了最新数据允许的 {max}",
	NextStale:            "再调用 {tool} 获取新数据；仍然过期时，告诉用户数据可能已过时以及抓取时间",
	ReasonMorePages:      "{tool} 的结果只是一页，后面还有更多页，数据不完整",
	NextMorePages:        "再调用 {tool}，把 {param} 设为 {cursor} 读取下一页；读完最后一页数据才完整",
	ReasonAccepted:       "{tool} 已受理请求，任务编号 {job}；任务尚未完成",
	NextPoll:             "调用 {poll}，{param} 填 {job}，查询任务是否完成；查询确认完成之前，不要告诉用户已经完成",
	ReasonInsufficient:   "{tool} 的结果不满足当前目标：{detail}",
	NextInsufficient:     "不要把这个结果当作足够：修正调用、换数据源，或告诉用户缺少什么",
	ReasonEmptyAnswer:    "{tool} 返回空结果，这就是答案：没有匹配项",
	NextEmptyAnswer:      "如实说明没有匹配项；不要为同一内容再次查询",
	ReasonEmptyResult:    "{tool} 返回空结果",
	StatusInsufficient:   "信息不足",
	StatusAccepted:       "已受理，未完成",
	StatusAnswered:       "已作答",
	NextBlockedRate:      "稍后再试或换数据源；不要立即再调用 {tool}",
	SourceStep:           "步骤 {step} 的产出 {key}",
	WallCaptcha:          "验证码页面",
	WallLogin:            "登录页面",
	WallRate:             "限流页面",
	NextBlocked:          "须由人越过阻断：用 builtin_node_follow_up 告诉用户，或换数据源；不要以同样方式再调用 {tool}",
	NextStepMissing:      "本步骤拿不到 {param}：用 builtin_node_follow_up 告诉用户，或调用 builtin_node_fail 说明原因",
	StepCheckNote:        "步骤校验：{status}：{reason}。下一步：{next}",
	StepCheckPassed:      "步骤校验：{status}",
	StepPending:          "待执行",
	StepInProgress:       "进行中",
	StepSatisfied:        "已满足",
	StepInsufficient:     "信息不足",
	StepBlocked:          "被阻断",
	StepFailed:           "失败",
	NextStepUnsatisfied:  "按步骤校验的要求补齐；步骤无法完成时调用 builtin_node_fail 说明原因",
	InputsHeader:         "之前步骤已验证的产出。参数按工具契约从中取值；要把其中的值写入产出，调用 builtin_output_set，sourceType 填 tool_result，sourceRef 填下面给出的引用：",
	InputLine:            "- {ref}（步骤 {step}）：{values}",
	StatusesHeader:       "任务各步骤的状态。未满足的步骤不要说成已完成，并说明缺少什么：",
	StatusLine:           "- {step}：{status}{detail}",
	MustSay:              "；答案须说明：{text}",
	NextAnswerUnverified: "不要把 {value} 当作事实陈述：说明步骤 {step} 未经验证，或去掉这个值，然后再调用 builtin_node_finish",
	NextAnswerMissing:    "在答案中说明：{text}；然后再调用 builtin_node_finish",
	ReasonModelWord:      "步骤只凭模型的说法结束：没有必填产出或校验器确认它",
	JudgeSystem: `你检查任务中的一个步骤是否完成。这个步骤不是你做的；只根据给出的结果判断。
评审标准：{rubric}
只回答一个 JSON 对象，不要有其它内容，字段为 status（"satisfied"、"insufficient"、"blocked" 或 "failed"）、reason（一句话）和 evidence（你依据的结果的调用 ID 数组）。
"satisfied" 时 evidence 至少要有一个调用 ID。`,
	JudgeUser:           "步骤：{step}\n任务：{task}\n步骤中工具的结果：\n{evidence}\n步骤的答案：{answer}",
	ReasonJudgeUnread:   "评审的回答无法读取：{detail}",
	ReasonJudgeNoCite:   "评审没有引用步骤的任何结果",
	ReasonStepLimit:     "任务达到了 {max} 个步骤的上限",
	ReasonStepNotRun:    "任务没有分支走到这个步骤",
	ReasonOutputMissing: "步骤没有验证产出 {key}",
}

// taskReasons are the Chinese reasons of the codes of this file's
// situations.
var taskReasons = map[errcode.Code]string{
	errcode.ToolBlocked:                "{tool} 返回的是{wall}，不是内容：{detail}",
	errcode.ParamProvenanceStepMissing: "{tool} 的参数 {param} 须来自 {source}，本步骤没有收到它",
	errcode.StepNotSatisfied:           "步骤未经验证为完成：当前为{status}：{detail}",
	errcode.AnswerClaimsUnverified:     "答案陈述了 {value}，它来自步骤 {step}，而该步骤为{status}",
	errcode.AnswerOmitsMissing:         "答案没有说明 {step} 缺失（{status}）：须说明 {text}",
}

func init() {
	for c, t := range taskReasons {
		chineseReasons[c] = t
	}
	for k, n := range taskNames {
		keyNames[k] = n
	}
	for k, t := range taskEnglish {
		englishTexts[k] = t
	}
	for k, t := range taskChinese {
		chineseTexts[k] = t
	}
}
