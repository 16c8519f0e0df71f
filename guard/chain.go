package guard

import (
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
)

// Options configures the default chain built by [Default]: every store and
// option of the seven guards in one place. The zero value means defaults:
// English texts, in-memory stores, [DefaultFingerprintLimit], approval for
// every write, each tool's own retry policy.
type Options struct {
	// Catalog renders every reason and next step; nil means English.
	Catalog *prompt.Catalog

	// Ledger is the evidence ledger the param contract and the fingerprint
	// guard read and the evidence guard writes. Nil means a new
	// [evidence.Memory], stored back into the Options (see [Default]).
	Ledger evidence.Ledger
	// Approvals holds gated calls and approvals; the loop approves through
	// the same store. Nil means a new [MemoryApprovals], stored back.
	Approvals Approvals
	// WriteLedger records writes by idempotency key. Nil means a new
	// [MemoryWriteLedger], stored back.
	WriteLedger WriteLedger

	// ArgPolicy is the host's check of parsed arguments
	// ([ArgPolicyOptions.Policy]); nil accepts all that pass the schema.
	ArgPolicy ArgPolicyFunc
	// ArgCache is [ArgPolicyOptions.Cache]: how many passed argument texts
	// the arg policy remembers per tool schema; 0 means [DefaultArgCache],
	// a negative value none.
	ArgCache int
	// ParamPolicy is the host's check of declared parameter values
	// ([ParamContractOptions.Policy]); nil accepts them.
	ParamPolicy ParamPolicy
	// FingerprintLimit is [FingerprintOptions.Limit]; 0 means
	// [DefaultFingerprintLimit].
	FingerprintLimit int
	// RequireApproval is [WriteGateOptions.RequireApproval]; nil means every
	// write needs approval.
	RequireApproval func(call invoker.Call) bool
	// Uncertain is [WriteGateOptions.Uncertain]; nil means
	// [UncertainWrite].
	Uncertain UncertainFunc
	// Retry configures the retry guard: default policy, sleep and jitter
	// source.
	Retry RetryOptions
	// MaxPayload is [EvidenceOptions.MaxPayload]; 0 means
	// [DefaultMaxPayload].
	MaxPayload int
	// Offload is [EvidenceOptions.Offload]; nil keeps reduced payloads only.
	Offload Offload
	// MaxDetail is [ResponseContractOptions.MaxDetail]; 0 means
	// [DefaultMaxDetail].
	MaxDetail int
	// Now is the clock of the evidence guard's fetch times and of the
	// response contract's result ages; nil means time.Now.
	Now func() time.Time
}

// Default returns the default guard chain, outermost first, ready for
// [invoker.Chain] around the default invoker:
//
//	ArgPolicy, ParamContract, Fingerprint, WriteGate, Retry, Evidence, ResponseContract
//
// The package documentation explains the order: arguments are checked
// before anything reads them; provenance before a repeat is counted; the
// fingerprint before a write is gated; the write gate outside the retry
// guard so that one approval and one ledger claim cover all attempts of a
// call; the retry guard outside the evidence guard so that every attempt is
// recorded; the response contract innermost so that every guard sees the
// business verdict rather than the raw "HTTP 200".
//
// A nil opts means the zero Options. When opts is not nil, Default stores
// the in-memory stores it creates for nil Ledger, Approvals and WriteLedger
// back into *opts, so the caller can hand the very same stores to the loop
// (which approves through Approvals and checks outputs against Ledger).
// The guards share those stores and are safe for concurrent use; build the
// chain once and call it from any number of goroutines.
func Default(opts *Options) []invoker.Interceptor {
	var o Options
	if opts == nil {
		opts = &o
	}
	if opts.Ledger == nil {
		opts.Ledger = evidence.NewMemory()
	}
	if opts.Approvals == nil {
		opts.Approvals = NewMemoryApprovals()
	}
	if opts.WriteLedger == nil {
		opts.WriteLedger = NewMemoryWriteLedger()
	}
	return []invoker.Interceptor{
		ArgPolicy(ArgPolicyOptions{Catalog: opts.Catalog, Policy: opts.ArgPolicy, Cache: opts.ArgCache}),
		ParamContract(ParamContractOptions{Ledger: opts.Ledger, Catalog: opts.Catalog, Policy: opts.ParamPolicy}),
		Fingerprint(FingerprintOptions{Ledger: opts.Ledger, Catalog: opts.Catalog, Limit: opts.FingerprintLimit}),
		WriteGate(WriteGateOptions{
			Approvals:       opts.Approvals,
			WriteLedger:     opts.WriteLedger,
			Catalog:         opts.Catalog,
			RequireApproval: opts.RequireApproval,
			Uncertain:       opts.Uncertain,
			Ledger:          opts.Ledger,
		}),
		Retry(opts.Retry),
		Evidence(EvidenceOptions{Ledger: opts.Ledger, MaxPayload: opts.MaxPayload, Offload: opts.Offload, Now: opts.Now}),
		ResponseContract(ResponseContractOptions{Catalog: opts.Catalog, MaxDetail: opts.MaxDetail, Now: opts.Now}),
	}
}
