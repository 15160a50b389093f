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

// chatFormat is one chat template family, rendered turn by turn so that a
// conversation continues from the KV cache: only each new turn's tokens
// are prefilled.
type chatFormat struct {
	name string
	// first renders the first user turn (with the system prompt, if any)
	// and the assistant's header; next renders a later user turn.
	first func(sys, msg string) string
	next  func(msg string) string
	// end is the token text that ends an assistant turn (the stop token);
	// after is the text that follows it before the next turn.
	end, after string
}

var chatFormats = map[string]chatFormat{
	"chatml": {name: "chatml",
		first: func(sys, m string) string {
			if sys == "" {
				return chatMLUser(m)
			}
			return "<|im_start|>system\n" + sys + "<|im_end|>\n" + chatMLUser(m)
		},
		next: chatMLUser, end: "<|im_end|>", after: "\n"},
	"llama-3": {name: "llama-3",
		first: func(sys, m string) string {
			if sys == "" {
				return llama3User(m)
			}
			return "<|start_header_id|>system<|end_header_id|>\n\n" + sys + "<|eot_id|>" + llama3User(m)
		},
		next: llama3User, end: "<|eot_id|>"},
	"llama-2": {name: "llama-2",
		first: func(sys, m string) string {
			if sys != "" {
				m = "<<SYS>>\n" + sys + "\n<</SYS>>\n\n" + m
			}
			return "[INST] " + m + " [/INST]"
		},
		next: func(m string) string { return "<s>[INST] " + m + " [/INST]" },
		end:  "</s>"},
}

func chatMLUser(m string) string {
	return "<|im_start|>user\n" + m + "<|im_end|>\n<|im_start|>assistant\n"
}

func llama3User(m string) string {
	return "<|start_header_id|>user<|end_header_id|>\n\n" + m + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
}

// detectChatFormat picks the template family from tokenizer.chat_template,
// then from the vocabulary's special tokens; "" when neither tells.
func detectChatFormat(v *tokenizer.Vocab) string {
	t := v.ChatTemplate
	has := func(tok string) bool {
		for _, s := range v.Tokens {
			if s == tok {
				return true
			}
		}
		return false
	}
	switch {
	case strings.Contains(t, "<|im_start|>"):
		return "chatml"
	case strings.Contains(t, "<|start_header_id|>"):
		return "llama-3"
	case strings.Contains(t, "[INST]"):
		return "llama-2"
	case t == "" && has("<|im_start|>"):
		return "chatml"
	case t == "" && has("<|eot_id|>"):
		return "llama-3"
	}
	return ""
}

func newChatCmd() *cobra.Command {
	var (
		n       int
		ctxLen  int
		system  string
		format  string
		sampler llm.SamplerOptions
		opts    func() weft.Options
	)
	cmd := &cobra.Command{
		Use:   "chat MODEL.gguf [--system TEXT] [--format chatml|llama-2|llama-3]",
		Short: "chat with a GGUF language model (reads stdin lines)",
		Long: "An interactive conversation: each line of stdin is a user message, the\n" +
			"assistant's reply streams to stdout. The chat template family is detected\n" +
			"from the model's tokenizer.chat_template (ChatML, Llama 2, Llama 3) or set\n" +
			"with --format. The conversation is kept in the KV cache: each turn\n" +
			"prefills only its own tokens. A line \"/reset\" starts a new conversation.\n" +
			"When the context (--ctx) is full the chat stops with a message (policy\n" +
			"stop). Metrics go to stderr after each reply.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if err := sampler.Validate(); err != nil {
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
			if format == "" {
				format = detectChatFormat(v)
			}
			cf, ok := chatFormats[format]
			if !ok {
				return fmt.Errorf("chat %s: %w chat template (detected %q): give --format chatml, llama-2 or llama-3", path, ir.ErrUnsupported, format)
			}
			endIDs := tok.Encode(cf.end, false, true)
			if len(endIDs) != 1 {
				return fmt.Errorf("chat %s: the %s end-of-turn marker %q is not one token of the vocabulary", path, cf.name, cf.end)
			}
			stop := []int32{endIDs[0]}
			if v.EOS >= 0 && v.EOS != endIDs[0] {
				stop = append(stop, v.EOS)
			}
			lm, err := loadLLM(path, ctxLen, []int{64}, opts())
			if err != nil {
				return fmt.Errorf("chat: %w", err)
			}
			defer lm.Close()
			stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
			fmt.Fprintf(stderr, "weft: %s; chat template %s\n", lm.summary(), cf.name)
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer cancel()
			c := &chatSession{lm: lm, tok: tok, cf: cf, system: system, stop: stop,
				opts: llm.Options{MaxTokens: n, Stop: stop, Sampler: sampler}}
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
				met, err := c.turn(ctx, line, out)
				fmt.Fprintln(out)
				if errors.Is(err, llm.ErrContextFull) || met.Stop == llm.StopContextFull {
					return fmt.Errorf("chat: the context of %d tokens is full (policy stop; use a larger --ctx or /reset)", lm.capacity)
				}
				if err != nil {
					return fmt.Errorf("chat: %w", err)
				}
				fmt.Fprintf(stderr, "weft: %v; %d tokens in the cache%s\n", met, lm.model.Pos(), rssNote())
			}
			return in.Err()
		},
	}
	opts = addOptFlag(cmd)
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
	cf     chatFormat
	system string
	stop   []int32
	opts   llm.Options

	turns int
	// pending are tokens the cache still lacks from the previous reply: the
	// last emitted token (when the reply hit the token limit) and the
	// end-of-turn token with what follows it.
	pending []int32
}

func (c *chatSession) reset() {
	c.turns, c.pending = 0, nil
	c.lm.model.Reset()
}

// turn renders msg as the next user turn, continues the cached
// conversation with it and streams the reply to out.
func (c *chatSession) turn(ctx context.Context, msg string, out io.Writer) (llm.Metrics, error) {
	first := c.turns == 0
	text := c.cf.next(msg)
	if first {
		text = c.cf.first(c.system, msg)
	}
	ids := append(append([]int32(nil), c.pending...), c.tok.Encode(text, first, true)...)
	stream := newTextStream(c.tok, out, nil)
	var reply []int32
	var met llm.Metrics
	var err error
	emit := func(id int32) bool {
		reply = append(reply, id)
		return stream.add(id) == nil
	}
	if first {
		met, err = c.lm.model.Generate(ctx, ids, c.opts, emit)
	} else {
		met, err = c.lm.model.Continue(ctx, ids, c.opts, emit)
	}
	stream.flush()
	if err != nil {
		return met, err
	}
	c.turns++
	c.pending = nil
	if met.Stop != llm.StopToken && len(reply) > 0 {
		c.pending = append(c.pending, reply[len(reply)-1])
	}
	c.pending = append(c.pending, c.tok.Encode(c.cf.end+c.cf.after, false, true)...)
	return met, nil
}
