package pending_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/reactguard/reactguard/internal/pending"
)

func TestMap(t *testing.T) {
	var p pending.Map[string, int]
	if _, ok := p.Get("a"); ok {
		t.Fatal("the zero Map holds a value")
	}
	p.Put("a", 1)
	p.Put("b", 2)
	p.DeleteIf("a", func(v int) bool { return v == 9 })
	if v, ok := p.Get("a"); !ok || v != 1 {
		t.Fatalf("DeleteIf removed a value that was put since: %v, %v", v, ok)
	}
	p.DeleteIf("a", func(v int) bool { return v == 1 })
	if _, ok := p.Get("a"); ok {
		t.Fatal("DeleteIf kept the value it was told was written")
	}
	var tried []string
	p.Put("c", 3)
	p.Retry(func(k string, _ int) error {
		tried = append(tried, k)
		if k == "b" {
			return errors.New("still down")
		}
		return nil
	})
	if len(tried) != 2 {
		t.Fatalf("Retry tried %v; want b and c", tried)
	}
	if _, ok := p.Get("b"); !ok {
		t.Fatal("Retry removed an entry whose write failed")
	}
	if _, ok := p.Get("c"); ok {
		t.Fatal("Retry kept an entry it wrote")
	}
	p.Delete("b")
	p.Retry(func(string, int) error { t.Fatal("Retry of an empty map called write"); return nil })
}

func TestMapConcurrent(t *testing.T) {
	var p pending.Map[int, int]
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			p.Put(i%4, i)
			p.Get(i % 4)
			p.Retry(func(int, int) error { return nil })
			p.Delete(i % 4)
		})
	}
	wg.Wait()
}
