package acceptance

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

func BenchmarkZZWay(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("ZZ_N"))
	k := 4
	silent := slog.New(slog.DiscardHandler)
	var script []react.Response
	execs := 0
	model := &replayer{turns: &script}
	t := turnTool(&execs)
	cfg := react.Config{Model: model, Tools: tool.MustCatalog(t), Logger: silent}
	l, _ := react.New(cfg)
	node := react.Node{Name: "turns", Tools: []string{"lookup"}, MaxRounds: n + 1}
	i := 0
	scripts := make([][]react.Response, 50)
	for j := range scripts {
		scripts[j] = turnScript(n, k, j)
	}
	for b.Loop() {
		script = scripts[i%50]
		i++
		model.next = 0
		if _, err := l.Run(context.Background(), node, "x"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*n), "ns/turn")
}
