package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime/llm"
	"github.com/weftrt/weft/tokenizer"
)

// chatEnd is the token text that ends an assistant turn in each template
// family (the reply's stop token).
var chatEnd = map[tokenizer.Template]string{
	tokenizer.TemplateChatML: "<|im_end|>",
	tokenizer.TemplateLlama3: "<|eot_id|>",
	tokenizer.TemplateLlama2: "</s>",
}

// replyMark stands for the last reply's text when a conversation is
// rendered to find what follows the reply.
const replyMark = "\x00weft-reply\x00"

func newChatCmd() *cobra.Command {
	var (
		n       int
		ctxLen  int
		system  string
		format  string
		sampler llm.SamplerOptions
		opts    func() weft.Options
		kvType  func() (ir.DType, error)
		draft   *draftFlags
	)
	cmd := &cobra.Command{
		Use:   "chat MODEL.gguf [--system TEXT] [--format chatml|llama-2|llama-3] [--draft DRAFT.gguf | --draft-layers N] [-k K]",
		Short: "chat with a GGUF language model (reads stdin lines)",
		Long: "An interactive conversation: each line of stdin is a user message, the\n" +
			"assistant's reply streams to stdout. The chat template family is detected\n" +
			"from the model's tokenizer.chat_template (ChatML, Llama 2, Llama 3) or set\n" +
			"with --format. The conversation is kept in the KV cache: each turn\n" +
			"prefills only its own tokens. A line \"/reset\" starts a new conversation.\n" +
			"When the context (--ctx) is full the chat stops with a message (policy\n" +
			"stop). Metrics go to stderr after each reply.\n" +
			"Speculative decoding: with --draft DRAFT (a smaller model with the same\n" +
			"vocabulary) or --draft-layers N (the target's own first N layers) the draft\n" +
			"proposes -k tokens per round (fewer below --draft-p-min) and the target\n" +
			"verifies them in one run, as in `weft generate`. The draft keeps the\n" +
			"conversation in its own cache, fed the same tokens each turn. Greedy\n" +
			"replies (--temp 0) are the same as without a draft where the target's\n" +
			"batched and one-token kernels round each row alike; sampling follows the\n" +
			"same distribution, seeded. After each reply the acceptance rate and\n" +
			"target passes go to stderr. A draft whose context cannot hold the\n" +
			"conversation stops proposing until /reset.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if err := sampler.Validate(); err != nil {
				return fmt.Errorf("chat: %w", err)
			}
			if err := draft.validate(); err != nil {
				return fmt.Errorf("chat: %w", err)
			}
			v, err := tokenizer.LoadGGUFVocab(path)
			if err != nil {
				return fmt.Errorf("chat %s: the model's tokenizer: %w", path, err)
			}
			tok, err := tokenizer.New(v)
			if err != nil {
				return fmt.Errorf("chat %s: the model's tokenizer: %w", path, err)
			}
			tmpl := tokenizer.Template(format)
			if format == "" {
				if tmpl, err = tokenizer.DetectTemplate(v.ChatTemplate); err != nil {
					return fmt.Errorf("chat %s: %w (give --format chatml, llama-2 or llama-3)", path, err)
				}
			}
			end, ok := chatEnd[tmpl]
			if !ok {
				return fmt.Errorf("chat %s: --format %q: %w (want chatml, llama-2 or llama-3)", path, format, ir.ErrUnsupported)
			}
			endIDs := tok.Encode(end, false, true)
			if len(endIDs) != 1 {
				return fmt.Errorf("chat %s: the %s end-of-turn marker %q is not one token of the vocabulary", path, tmpl, end)
			}
			stop := []int32{endIDs[0]}
			if v.EOS >= 0 && v.EOS != endIDs[0] {
				stop = append(stop, v.EOS)
			}
			kvT, err := kvType()
			if err != nil {
				return fmt.Errorf("chat: %w", err)
			}
			prefill := []int{64}
			lm, err := loadLLM(path, ctxLen, 0, draft.targetSeqs(prefill), kvT, opts())
			if err != nil {
				return fmt.Errorf("chat: %w", err)
			}
			defer lm.Close()
			stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
			fmt.Fprintf(stderr, "weft: %s; chat template %s\n", lm.summary(), tmpl)
			c := &chatSession{lm: lm, tok: tok, tmpl: tmpl, system: system,
				opts: llm.Options{MaxTokens: n, Stop: stop, Sampler: sampler}}
			if draft.enabled() {
				if c.draft, err = draft.load(lm, 0, prefill, kvT, opts()); err != nil {
					return fmt.Errorf("chat: %w", err)
				}
				defer c.draft.Close()
				c.spec = draft.options(c.opts)
				fmt.Fprintf(stderr, "weft: draft %s\n", c.draft.summary())
			}
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer cancel()
			in := bufio.NewScanner(cmd.InOrStdin())
			in.Buffer(make([]byte, 0, 1<<16), 1<<20)
			for in.Scan() {
				line := strings.TrimSpace(in.Text())
				switch line {
				case "":
					continue
				case "/reset":
					c.reset()
					fmt.Fprintln(stderr, "weft: conversation reset")
					continue
				}
				stop, met, err := c.turn(ctx, line, out)
				fmt.Fprintln(out)
				if errors.Is(err, llm.ErrContextFull) || stop == llm.StopContextFull {
					return fmt.Errorf("chat: the context of %d tokens is full (policy stop; use a larger --ctx or /reset)", lm.capacity)
				}
				if err != nil {
					return fmt.Errorf("chat: %w", err)
				}
				fmt.Fprintf(stderr, "weft: %v; %d tokens in the cache%s\n", met, lm.model.Pos(), rssNote())
				if c.draft != nil && c.draft.model.Pos() != lm.model.Pos() && !c.draftOut {
					c.draftOut = true
					fmt.Fprintf(stderr, "weft: the draft's context of %d tokens cannot hold the conversation: the target goes on alone until /reset\n", c.draft.capacity)
				}
			}
			return in.Err()
		},
	}
	opts = addOptFlag(cmd)
	kvType = kvTypeFlag(cmd)
	draft = addDraftFlags(cmd)
	f := cmd.Flags()
	f.IntVarP(&n, "tokens", "n", 512, "the most tokens per reply")
	f.IntVar(&ctxLen, "ctx", 0, "KV cache capacity in tokens (0: the model's context length)")
	f.StringVar(&system, "system", "", "system prompt")
	f.StringVar(&format, "format", "", "chat template family: chatml, llama-2, llama-3 (default: detected)")
	f.Float64Var(&sampler.Temperature, "temp", 0.7, "sampling temperature; 0 is greedy")
	f.IntVar(&sampler.TopK, "top-k", 40, "keep the K most likely tokens (0: all)")
	f.Float64Var(&sampler.TopP, "top-p", 0.9, "nucleus sampling threshold (0: off)")
	f.Float64Var(&sampler.MinP, "min-p", 0, "min-p threshold (0: off)")
	f.Float64Var(&sampler.RepetitionPenalty, "repeat-penalty", 0, "repetition penalty (1 or 0: off)")
	f.IntVar(&sampler.RepeatWindow, "repeat-window", 64, "tokens of history the repetition penalty looks at")
	f.Uint64Var(&sampler.Seed, "seed", 0, "random seed for sampling")
	return cmd
}

// chatSession is a conversation held in the model's KV cache.
type chatSession struct {
	lm     *llmModel
	tok    *tokenizer.Tokenizer
	tmpl   tokenizer.Template
	system string
	opts   llm.Options

	// draft, when set, proposes tokens (speculative decoding with spec);
	// its cache holds what the target's holds. draftOut: it could not
	// (its context is full), which is reported once.
	draft    *llmModel
	spec     llm.SpecOptions
	draftOut bool

	msgs []tokenizer.Message // the conversation so far (replies as decoded text)
	// pending is the last emitted token when a reply hit the token limit
	// (emitted, not yet in the cache).
	pending []int32
}

func (c *chatSession) reset() {
	c.msgs, c.pending = nil, nil
	c.lm.model.Reset()
	if c.draft != nil {
		c.draft.model.Reset()
		c.draftOut = false
	}
}

// turnText renders the text the cache lacks for the next user turn msg:
// the whole conversation for the first turn; afterwards what follows the
// last reply in the rendered conversation (its end-of-turn marker, then
// the new turn and the assistant header), found by rendering the last
// reply as a marker.
func (c *chatSession) turnText(msg string) (string, error) {
	next := append(append([]tokenizer.Message(nil), c.msgs...), tokenizer.Message{Role: "user", Content: msg})
	if len(c.msgs) == 0 {
		if c.system != "" {
			next = append([]tokenizer.Message{{Role: "system", Content: c.system}}, next...)
		}
		return tokenizer.RenderChat(c.tmpl, next, true)
	}
	marked := append([]tokenizer.Message(nil), next...)
	marked[len(c.msgs)-1].Content = replyMark
	if c.system != "" {
		marked = append([]tokenizer.Message{{Role: "system", Content: c.system}}, marked...)
	}
	full, err := tokenizer.RenderChat(c.tmpl, marked, true)
	if err != nil {
		return "", err
	}
	i := strings.Index(full, replyMark)
	if i < 0 {
		return "", fmt.Errorf("chat: the %s template dropped the previous reply", c.tmpl)
	}
	// The cache holds the reply's own tokens: what follows it starts at
	// the end-of-turn marker (a space before it belongs to the reply).
	return strings.TrimLeft(full[i+len(replyMark):], " "), nil
}

// turn continues the cached conversation with the user message msg and
// streams the reply to out. It returns why the reply ended and the
// metrics to report (with a draft, the speculative ones).
func (c *chatSession) turn(ctx context.Context, msg string, out io.Writer) (llm.StopReason, fmt.Stringer, error) {
	text, err := c.turnText(msg)
	if err != nil {
		return "", llm.Metrics{}, err
	}
	first := len(c.msgs) == 0
	ids := append(append([]int32(nil), c.pending...), c.tok.Encode(text, first, true)...)
	stream := newTextStream(c.tok, out, nil)
	var reply []int32
	var met llm.Metrics
	emit := func(id int32) bool {
		reply = append(reply, id)
		return stream.add(id) == nil
	}
	var report fmt.Stringer
	switch {
	case c.draft != nil:
		if first {
			c.lm.model.Reset()
			c.draft.model.Reset()
		}
		// The caches lack what Continue's would: the same pending logic.
		var sm llm.SpecMetrics
		sm, err = llm.SpeculateContinue(ctx, c.lm.model, c.draft.model, ids, c.spec, emit)
		met, report = sm.Metrics, sm
	case first:
		met, err = c.lm.model.Generate(ctx, ids, c.opts, emit)
		report = met
	default:
		met, err = c.lm.model.Continue(ctx, ids, c.opts, emit)
		report = met
	}
	stream.flush()
	if err != nil {
		return met.Stop, report, err
	}
	c.pending = nil
	if met.Stop != llm.StopToken && len(reply) > 0 {
		c.pending = []int32{reply[len(reply)-1]}
	}
	replyText, err := c.tok.Decode(reply, false)
	if err != nil {
		return met.Stop, report, err
	}
	c.msgs = append(c.msgs, tokenizer.Message{Role: "user", Content: msg}, tokenizer.Message{Role: "assistant", Content: replyText})
	return met.Stop, report, nil
}
