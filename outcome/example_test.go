package outcome_test

import (
	"fmt"

	"github.com/reactguard/reactguard/outcome"
)

func ExampleOutcome_Stalls() {
	for _, o := range outcome.All() {
		fmt.Printf("%-8s advances=%-5v stalls=%v\n", o, o.Advances(), o.Stalls())
	}
	// Output:
	// SUCCESS  advances=true  stalls=false
	// FAILED   advances=false stalls=true
	// REJECTED advances=false stalls=true
	// DEFERRED advances=false stalls=false
}

func ExampleParse() {
	o, err := outcome.Parse("DEFERRED")
	fmt.Println(o, err)
	_, err = outcome.Parse("deferred")
	fmt.Println(err)
	// Output:
	// DEFERRED <nil>
	// outcome: unknown name "deferred" (want SUCCESS, FAILED, REJECTED or DEFERRED)
}
