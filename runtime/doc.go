// Package runtime executes a plan: a Session compiles each partition on its
// device once, binds the constants once, and then runs the plan on named
// inputs, as many times and from as many goroutines as the caller likes.
//
// Memory: each run borrows a run state (the device arenas of the plan's
// memory plan and the devices' per-run executable states) from a pool, so
// concurrent runs never share intermediates and sequential runs reuse them.
// Run returns outputs it allocated; RunInto writes them into the caller's
// tensors and, once the session is warm, allocates nothing.
//
// runtime talks to devices only through the backends API and must not know
// any frontend or pass. The LLM runtime (KV cache, sampler, streaming
// generation) will live in runtime/llm.
package runtime
