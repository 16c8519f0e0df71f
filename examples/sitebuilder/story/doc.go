// Package story is reactguard's demo story, the specification's own: a
// user asks an agent to create a website. The agent lists the existing
// websites and the spaces (reads), calls the write tool create_site, is
// told that the write needs the user's approval (DEFERRED
// APPROVAL_REQUIRED, which neither stalls nor fails the node), asks for it
// with builtin_node_approval, and the run suspends. The host stores the
// run's JSON snapshot, asks the user, and resumes the snapshot in a new
// loop value, as a new process would. On approval create_site runs once,
// the agent records the new site as the node's output and finishes; on
// decline the agent ends the node with the user's refusal.
//
// Every sitebuilder program tells this story: the offline demo of the core
// module (examples/sitebuilder, with the [Scripted] model) and the examples
// of the chat adapters (adapters/openai and adapters/anthropic, with a real
// model). The package is public so that the adapter modules can import it;
// it is a demo, not a library API, and may change with the demo.
//
// # The story's parts
//
// [Backend] is the fake system behind the tools and counts the sites it
// creates; [Backend.Tools] is the catalog: list_websites and list_spaces
// (reads) and create_site (a write whose space_id must come from a
// list_spaces result and whose name from the user's words). [Node] is the
// ReAct task, [Task] the user's words in each language, and [Scripted] the
// offline agent, stateless like a real LLM.
//
// # Running it
//
// [Run] tells the story with a [Config]: it runs the node, prints the
// trace to Config.Out in the chosen [View], and on each suspension keeps
// only the snapshot bytes, takes the user's decision (the Approve or
// Decline flag, else y/n from an interactive terminal, else approval) and
// resumes in a new [react.Loop] that shares nothing with the first but the
// stores (approvals, write ledger, evidence), as replicas of a service
// would. A story ends finished or failed, or stops after [MaxResumes]
// resumes.
//
// # Programs
//
// [ParseFlags] parses the command line every sitebuilder program shares,
// [Exit] turns an error into the exit code and message, and [IsTerminal]
// tells whether stdin is a terminal. A program's main only adds its model:
//
//	cfg, err := story.ParseFlags(os.Args[1:], os.Stderr)
//	if err != nil {
//		os.Exit(story.Exit(os.Stderr, err))
//	}
//	cfg.Model = story.Scripted()
//	cfg.In, cfg.Interactive, cfg.Out = os.Stdin, story.IsTerminal(os.Stdin), os.Stdout
//	_, err = story.Run(context.Background(), cfg)
//	os.Exit(story.Exit(os.Stderr, err))
//
// # Concurrency
//
// Run is safe to call from several goroutines with distinct Configs (each
// story has its own backend and stores); the Config's writers and reader
// are used from the calling goroutine only.
package story
