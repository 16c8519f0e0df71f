// Command codes prints reactguard's verdicts and error codes.
package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
)

func main() {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OUTCOME\tADVANCES\tSTALLS")
	for _, o := range outcome.All() {
		fmt.Fprintf(w, "%s\t%v\t%v\n", o, o.Advances(), o.Stalls())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ID\tCODE\tLAYER\tCLASS\tRETRY")
	for _, c := range errcode.All() {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%v\n", c.ID(), c, c.Layer(), c.Class(), c.Retryable())
	}
	w.Flush()
}
