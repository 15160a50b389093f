// Package runtime executes a plan: a Session compiles each partition on its
// device once, binds the constants once, and then runs the plan on named
// inputs, as many times and from as many goroutines as the caller likes.
//
// runtime talks to devices only through the backends API and must not know
// any frontend or pass. The LLM runtime (KV cache, sampler, streaming
// generation) will live in runtime/llm.
package runtime
