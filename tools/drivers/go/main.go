// Command driver is the Go module's driver for `redis-atomic verify --driver` (docs/verify.md,
// "Drivers"): it drives bindings/go through the protocol's rows — `lock` (fences), `quota`,
// `ratelimit-sl` (a sliding log), `ratelimit-win` (a fixed window), `semaphore` — as a user
// following docs/go.md would, so the harness's faults prove the module's own retry rules.
//
// It never resends anything itself: the module already resends what is retry-safe (an
// acquisition of a lock or a permit with the caller's token, an add with a request id, a release) within its
// RetryPolicy, and nothing else, with go-redis's own resends off. Whatever the module answers is
// passed on: an outcome as its word, an error as its code (redisatomic.Code), so an unknown
// outcome reaches the harness as `outcome_unknown`. An error without a code is not the module's
// vocabulary: the driver panics (a bug to report, never an invented code).
//
// Under a fault it uses the short timeout of the in-process rows (200 ms per read and write), so
// a stall or a lost reply becomes an unknown outcome.
//
//	cd tools/drivers/go && go build -o target/driver .   # target/ is git-ignored
//	redis-atomic verify --driver tools/drivers/go/target/driver --fault conn-kill --only lock
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

// message is one JSON object of the protocol.
type message = map[string]any

// request is one line from the harness: a hello or an operation.
type request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args"`
	hello
}

func main() {
	d := &driver{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			panic(err)
		}
		var answer message
		if r.Op == "hello" {
			answer = d.hello(r.hello)
		} else {
			answer = d.run(r.Op, r.Args)
		}
		if err := out.Encode(answer); err != nil {
			panic(err)
		}
	}
	if err := in.Err(); err != nil {
		panic(err)
	}
	d.close()
}
