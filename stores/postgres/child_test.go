package postgres_test

// childEnv, when set, makes the test binary run as a child process of the
// process tests instead of running tests.
const childEnv = "REACTGUARD_TEST_CHILD"

func child(role string) int { return 2 }
