package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/tool"
)

// defaultNames names the guards of guard.Default, in the order returned.
var defaultNames = []string{"ArgPolicy", "ParamContract", "Fingerprint", "WriteGate", "Retry", "Evidence", "ResponseContract"}

// traced wraps each interceptor so that it logs entering and leaving,
// indented by depth.
func traced(log func(string), ics []invoker.Interceptor, names []string) []invoker.Interceptor {
	out := make([]invoker.Interceptor, len(ics))
	for i, ic := range ics {
		name, indent := names[i], strings.Repeat("  ", i)
		out[i] = func(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
			log(indent + "enter " + name)
			obs, err := ic(ctx, call, next)
			log(indent + "leave " + name + " " + obs.Outcome().String())
			return obs, err
		}
	}
	return out
}

func ExampleDefault() {
	type site struct {
		Name string `json:"name"`
	}
	listSites := tool.New("list_sites", "lists sites", func(context.Context, struct{}) ([]site, error) {
		fmt.Println("              list_sites runs")
		return []site{{Name: "blog"}}, nil
	})
	listSites.Effect = tool.Read
	createSite := tool.New("create_site", "creates a site", func(_ context.Context, in site) (site, error) {
		return in, nil
	})
	createSite.Effect = tool.Write
	tool.MustCatalog(listSites, createSite)

	var opts guard.Options // zero value: English, in-memory stores, default limits
	logLine := func(s string) { fmt.Println(s) }
	h := invoker.Chain(invoker.New(nil), traced(logLine, guard.Default(&opts), defaultNames)...)

	fmt.Println("-- a read passes every layer, outermost first, and the tool runs:")
	_, _ = h(context.Background(), invoker.Call{ID: "c1", Name: "list_sites", Args: json.RawMessage(`{}`), Tool: listSites, Run: "r"})

	fmt.Println("-- an unapproved write stops at the write gate:")
	obs, _ := h(context.Background(), invoker.Call{ID: "c2", Name: "create_site", Args: json.RawMessage(`{"name":"shop"}`), Tool: createSite, Run: "r"})
	fmt.Println(obs.Code())
	// Output:
	// -- a read passes every layer, outermost first, and the tool runs:
	// enter ArgPolicy
	//   enter ParamContract
	//     enter Fingerprint
	//       enter WriteGate
	//         enter Retry
	//           enter Evidence
	//             enter ResponseContract
	//               list_sites runs
	//             leave ResponseContract SUCCESS
	//           leave Evidence SUCCESS
	//         leave Retry SUCCESS
	//       leave WriteGate SUCCESS
	//     leave Fingerprint SUCCESS
	//   leave ParamContract SUCCESS
	// leave ArgPolicy SUCCESS
	// -- an unapproved write stops at the write gate:
	// enter ArgPolicy
	//   enter ParamContract
	//     enter Fingerprint
	//       enter WriteGate
	//       leave WriteGate DEFERRED
	//     leave Fingerprint DEFERRED
	//   leave ParamContract DEFERRED
	// leave ArgPolicy DEFERRED
	// APPROVAL_REQUIRED
}
